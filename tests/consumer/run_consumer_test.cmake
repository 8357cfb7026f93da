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
  # Install what the calling build already built: no second build of libhft.
  # A sanitized build's targets carry the sanitizer runtimes as a link
  # dependency only; no compile flag.
  run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix)
else()
  run(${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/lib -G ${GENERATOR} -DCMAKE_CXX_COMPILER=${CXX}
      -DCMAKE_BUILD_TYPE=Release -DHFT_BUILD_TESTS=OFF -DHFT_BUILD_BENCH=OFF -DHFT_BUILD_APPS=OFF
      -DHFT_QUICKFIX=OFF -DCMAKE_INSTALL_PREFIX=${WORK_DIR}/prefix)
  run(${CMAKE_COMMAND} --build ${WORK_DIR}/lib)
  run(${CMAKE_COMMAND} --install ${WORK_DIR}/lib)
endif()
# The consumer chooses -O2 and nothing else (no build type: no CMake defaults).
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/consumer -B ${WORK_DIR}/app -G ${GENERATOR}
    -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DCMAKE_BUILD_TYPE=
    -DCMAKE_CXX_FLAGS=-O2)
# Flags libhft's installed targets handed over would show in the compile
# commands: warnings, -march, sanitizers, another optimisation level.
file(READ ${WORK_DIR}/app/compile_commands.json commands)
string(REGEX MATCHALL "\"command\": \"[^\"]*consumer[^\"]*main\\.cpp[^\"]*\"" main_command "${commands}")
if(NOT main_command)
  message(FATAL_ERROR "no compile command for the consumer's main.cpp in ${WORK_DIR}/app/compile_commands.json")
endif()
foreach(flag "-march=" " -W" "-fsanitize" "-fno-omit-frame-pointer" " -O3" " -O1" " -O0" " -g")
  string(FIND "${main_command}" "${flag}" at)
  if(NOT at EQUAL -1)
    message(FATAL_ERROR "the consumer received '${flag}' from libhft's installed targets:\n${main_command}")
  endif()
endforeach()
string(FIND "${main_command}" " -O2" at)
if(at EQUAL -1)
  message(FATAL_ERROR "the consumer's own -O2 is missing:\n${main_command}")
endif()
run(${CMAKE_COMMAND} --build ${WORK_DIR}/app)
run(${WORK_DIR}/app/consumer)
