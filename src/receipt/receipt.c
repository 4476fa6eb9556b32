/* placeholder: being written this session */
#include "receipt.h"
