// test_main.cpp — Catch2 v2 entry point for the native test executable ap_tests (no tests here).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
