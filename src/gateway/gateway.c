/* placeholder: being written this session */
#include "gateway.h"
