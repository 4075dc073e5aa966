# ctest_cases.cmake — checks that ctest runs every Catch2 case of ap_tests, each under its own name.
# Limits: compares names only (ctest's entries labelled `catch2` against the binary's list); whether
# an entry runs its case is for `--warn NoTests` (CMakeLists.txt) to enforce.
# ctest runs it as: cmake -DAP_TESTS=<ap_tests> -DCTEST=<ctest> -DBUILD=<build dir> -P tests/ctest_cases.cmake
# catch_discover_tests splits a name at each ';' into entries that match no case; such a name makes
# the two lists differ. Lines are handled as text, never as CMake lists (';' and '[' would bend them).

# The names in `text`, one per line, as "\n<name>\n<name>\n", and their number in `count_var`.
function(name_lines text prefix_regex out_var count_var)
  set(lines "\n")
  set(n 0)
  while(NOT text STREQUAL "")
    string(FIND "${text}" "\n" nl)
    if(nl EQUAL -1)
      set(line "${text}")
      set(text "")
    else()
      string(SUBSTRING "${text}" 0 ${nl} line)
      math(EXPR next "${nl} + 1")
      string(SUBSTRING "${text}" ${next} -1 text)
    endif()
    if(prefix_regex STREQUAL "")
      set(name "${line}")
    elseif(line MATCHES "${prefix_regex}")
      string(REGEX REPLACE "${prefix_regex}" "" name "${line}")
    else()
      continue()
    endif()
    if(NOT name STREQUAL "")
      string(APPEND lines "${name}\n")
      math(EXPR n "${n} + 1")
    endif()
  endwhile()
  set(${out_var} "${lines}" PARENT_SCOPE)
  set(${count_var} ${n} PARENT_SCOPE)
endfunction()

# The names in `lines` missing from `others` (both from name_lines), one per line.
function(missing lines others out_var)
  set(absent "")
  string(SUBSTRING "${lines}" 1 -1 rest)
  while(NOT rest STREQUAL "")
    string(FIND "${rest}" "\n" nl)
    string(SUBSTRING "${rest}" 0 ${nl} name)
    math(EXPR next "${nl} + 1")
    string(SUBSTRING "${rest}" ${next} -1 rest)
    string(FIND "${others}" "\n${name}\n" at)
    if(at EQUAL -1)
      string(APPEND absent "  ${name}\n")
    endif()
  endwhile()
  set(${out_var} "${absent}" PARENT_SCOPE)
endfunction()

execute_process(COMMAND ${AP_TESTS} --list-test-names-only OUTPUT_VARIABLE listed RESULT_VARIABLE rc)
if(rc LESS 1)  # Catch2 exits with the number of cases listed (at most 255)
  message(FATAL_ERROR "${AP_TESTS} --list-test-names-only listed no case (exit ${rc})")
endif()
# ctest -N on a copy of the build's test file (its includes are absolute paths): ctest writes its
# Testing/Temporary/LastTest.log even with -N, and must not truncate the log of the run this is in.
file(MAKE_DIRECTORY ${BUILD}/ctest_cases)
file(COPY ${BUILD}/CTestTestfile.cmake DESTINATION ${BUILD}/ctest_cases)
execute_process(COMMAND ${CTEST} --test-dir ${BUILD}/ctest_cases -N -L "^catch2$"
                OUTPUT_VARIABLE shown RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "ctest -N exited ${rc}:\n${shown}")
endif()

name_lines("${listed}" "" case_lines n_cases)
name_lines("${shown}" "^ *Test +#[0-9]+: " entry_lines n_entries)
missing("${entry_lines}" "${case_lines}" not_cases)
missing("${case_lines}" "${entry_lines}" not_entries)
if(NOT n_cases EQUAL n_entries OR NOT not_cases STREQUAL "" OR NOT not_entries STREQUAL "")
  message(FATAL_ERROR
    "ap_tests has ${n_cases} cases, ctest ${n_entries} entries for them (a ';' in a case's name splits it)\n"
    "ctest entries that name no case:\n${not_cases}cases without a ctest entry of their name:\n${not_entries}")
endif()
message(STATUS "ok: ctest runs each of the ${n_cases} cases of ap_tests under its own name")
