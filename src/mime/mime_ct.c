/* placeholder: being written this session */
#include "mime.h"
