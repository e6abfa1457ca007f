# cmake/testing.cmake: how test code is compiled and how GoogleTest binaries become CTest tests.
#
# ember_test_code(TARGET): warnings on, and -O1 in optimized builds. Test code runs little work
# of its own (the library it links keeps -O3), and -O3 on it doubled the suite's compile time.
#
# ember_gtest(TARGET [EACH] [PREFIX p] [FILTER f] [PROPERTIES ...]): one CTest test per GoogleTest
# test (gtest_discover_tests), or, when EMBER_TEST_SHARDS is above 0 and EACH is not given (tests
# that start processes and wait on timeouts of their own keep a CTest test each), that many CTest tests each
# running one GoogleTest shard of the binary (GTEST_TOTAL_SHARDS / GTEST_SHARD_INDEX). The
# sanitizer preset shards: an instrumented test binary takes about half a second to start,
# longer than most of its tests take to run, and a process per test made the sanitizer stage's
# tests take 18 minutes. A failing shard's output names the GoogleTest tests that failed.
set(EMBER_TEST_SHARDS 0 CACHE STRING
    "Run each GoogleTest binary as this many CTest shards instead of one CTest test per test (0)")

function(ember_test_code target)
  target_compile_options(${target} PRIVATE -Wall -Wextra
                                           $<$<CONFIG:Release,RelWithDebInfo,MinSizeRel>:-O1>)
endfunction()

function(ember_gtest target)
  cmake_parse_arguments(ARG "EACH" "PREFIX;FILTER" "PROPERTIES" ${ARGN})
  if(EMBER_TEST_SHARDS GREATER 0 AND NOT ARG_EACH)
    set(filter_arg "")
    if(ARG_FILTER)
      set(filter_arg "--gtest_filter=${ARG_FILTER}")
    endif()
    math(EXPR last "${EMBER_TEST_SHARDS} - 1")
    foreach(index RANGE ${last})
      set(name "${ARG_PREFIX}${target}.shard${index}")
      add_test(NAME ${name} COMMAND ${target} ${filter_arg})
      set_tests_properties(${name} PROPERTIES
        ENVIRONMENT "GTEST_TOTAL_SHARDS=${EMBER_TEST_SHARDS};GTEST_SHARD_INDEX=${index}"
        ${ARG_PROPERTIES})
    endforeach()
  else()
    set(filter_args "")
    if(ARG_FILTER)
      set(filter_args TEST_FILTER "${ARG_FILTER}")
    endif()
    set(property_args "")
    if(ARG_PROPERTIES)
      set(property_args PROPERTIES ${ARG_PROPERTIES})
    endif()
    gtest_discover_tests(${target} TEST_PREFIX "${ARG_PREFIX}" DISCOVERY_TIMEOUT 120
                         ${filter_args} ${property_args})
  endif()
endfunction()
