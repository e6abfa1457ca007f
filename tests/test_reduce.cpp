// tests/test_reduce.cpp: placeholder, filled in by its owner.
#include "test_util.h"
