/* placeholder: being written this session */
#include "wss.h"
