/* placeholder: being written this session */
#include "pmode.h"
