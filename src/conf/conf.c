/* placeholder: being written this session */
#include "conf.h"
