// tests/test_matmul.cpp: placeholder, filled in by its owner.
#include "test_util.h"
