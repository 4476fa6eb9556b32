/* placeholder: being written this session */
#include "store.h"
