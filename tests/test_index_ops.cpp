// tests/test_index_ops.cpp: placeholder, filled in by its owner.
#include "test_util.h"
