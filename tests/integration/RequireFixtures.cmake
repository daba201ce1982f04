# nicer_require_fixtures(TEST_LIST FIXTURES...): every Catch2 test that catch_discover_tests listed in the
# variable TEST_LIST (its TEST_LIST option; ${TARGET}_TESTS by default) needs all these CTest fixtures.
# catch_discover_tests cannot pass a list-valued property (its semicolons split it), so the property is set
# by a script that ctest runs after the discovered tests are added.
function(nicer_require_fixtures test_list)
    set(script "${CMAKE_CURRENT_BINARY_DIR}/${test_list}_fixtures.cmake")
    file(WRITE "${script}"
        "foreach(test IN LISTS ${test_list})\n"
        "    set_tests_properties(\"\${test}\" PROPERTIES FIXTURES_REQUIRED \"${ARGN}\")\n"
        "endforeach()\n")
    set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${script}")
endfunction()
