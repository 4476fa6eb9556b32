/* placeholder: being written this session */
#include "payload.h"
