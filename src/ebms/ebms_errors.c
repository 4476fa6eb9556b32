/* placeholder: being written this session */
#include "ebms.h"
