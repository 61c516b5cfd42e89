# Installs the build tree into PREFIX, configures docs/examples/outside against
# it with find_package(tilec) and the build's CXX_FLAGS and EXE_LINKER_FLAGS,
# builds and runs the example.
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}")
  endif()
endfunction()
file(REMOVE_RECURSE ${PREFIX} ${OUTSIDE})
run(${CMAKE_COMMAND} --install ${TILEC_BINARY_DIR} --prefix ${PREFIX})
run(${CMAKE_COMMAND} -S ${EXAMPLE_DIR}/outside -B ${OUTSIDE} -G Ninja
    -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_PREFIX_PATH=${PREFIX}
    -DCMAKE_CXX_FLAGS=${CXX_FLAGS} -DCMAKE_EXE_LINKER_FLAGS=${EXE_LINKER_FLAGS})
run(${CMAKE_COMMAND} --build ${OUTSIDE})
run(${OUTSIDE}/gemm_example)
