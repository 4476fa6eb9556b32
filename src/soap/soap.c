/* placeholder: being written this session */
#include "soap.h"
