/* placeholder: being written this session */
#include "xml.h"
