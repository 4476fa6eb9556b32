/* placeholder: being written this session */
#include "inbox.h"
