// tests/test_dtype.cpp: placeholder, filled in by its owner.
#include "test_util.h"
