# Installs libhft into a scratch prefix, then builds and runs a consumer that
# uses find_package(libhft). Fails if any step fails.
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed: ${ARGN}\n${out}\n${err}")
  endif()
endfunction()
if(BUILD_DIR)
  # Install what the calling build already built (its flags, e.g. sanitizers,
  # travel with the exported hft::options target): no second build of libhft.
  run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix)
else()
  run(${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/lib -G ${GENERATOR} -DCMAKE_CXX_COMPILER=${CXX}
      -DCMAKE_BUILD_TYPE=Release -DHFT_BUILD_TESTS=OFF -DHFT_BUILD_BENCH=OFF -DHFT_BUILD_APPS=OFF
      -DHFT_QUICKFIX=OFF -DCMAKE_INSTALL_PREFIX=${WORK_DIR}/prefix)
  run(${CMAKE_COMMAND} --build ${WORK_DIR}/lib)
  run(${CMAKE_COMMAND} --install ${WORK_DIR}/lib)
endif()
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/consumer -B ${WORK_DIR}/app -G ${GENERATOR}
    -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/app)
run(${WORK_DIR}/app/consumer)
