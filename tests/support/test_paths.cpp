#include "tests/support/test_paths.h"
