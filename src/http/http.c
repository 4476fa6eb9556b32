/* placeholder: being written this session */
#include "http.h"
