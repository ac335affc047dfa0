# exactly_add_python_suite: the Python bindings' pytest suite (bindings/python/tests) as one
# CTest test per file, named <prefix>.<file> (python.test_spool, kafka3.python.test_aio, ...).
#
#   exactly_add_python_suite(<prefix> PYTHON <interpreter> LABELS <label>...
#                            [LAUNCHER <command>...] [PROPERTIES <property> <value>...])
#
# Why per file: the suite's tests mostly wait on brokers (rebalances, transaction timeouts,
# killed processes), so the files run side by side as CTest's other tests do. As one test the
# suite was the longest of every label that runs it (3-4 minutes), and the label could not end
# sooner. Tests share nothing across files: each starts its own broker, or, on a shared cluster
# (EXACTLY_TEST_BOOTSTRAP), uses topic names with the process id in them (conftest.py) and
# transactional and group ids that no other file uses.
#
# LAUNCHER comes before the interpreter (scripts/kafka.sh exec DIR --, which names the cluster).
# COST puts the files first: without timing history (a fresh CI machine) CTest could otherwise
# start a long one last.
function(exactly_add_python_suite prefix)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "PYTHON" "LABELS;LAUNCHER;PROPERTIES")
  file(GLOB test_files CONFIGURE_DEPENDS
       ${PROJECT_SOURCE_DIR}/bindings/python/tests/test_*.py)
  foreach(test_file ${test_files})
    get_filename_component(name ${test_file} NAME_WE)
    add_test(NAME ${prefix}.${name}
             COMMAND ${arg_LAUNCHER} ${arg_PYTHON} -m pytest -q -rs -p no:cacheprovider
                     -p exactly.pytest_plugin ${test_file})
    set_tests_properties(${prefix}.${name} PROPERTIES
      ENVIRONMENT "PYTHONPATH=${CMAKE_BINARY_DIR}/bindings/python;PYTHONDONTWRITEBYTECODE=1"
      LABELS "${arg_LABELS}"
      COST 10000
      TIMEOUT 900
      ${arg_PROPERTIES})
  endforeach()
endfunction()
