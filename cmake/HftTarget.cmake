# Common flags of the project's own build: every layer, test, benchmark and
# program links hft_options. It is linked as $<BUILD_INTERFACE:...>, so the
# installed targets carry none of it (STYLE.md rule 17): a consumer of
# find_package(libhft) chooses its own optimisation, warnings and -march.
add_library(hft_options INTERFACE)
target_compile_options(hft_options INTERFACE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor)
if(HFT_WERROR)
  target_compile_options(hft_options INTERFACE -Werror)
  # GCC's -Wmaybe-uninitialized and -Wrestrict report false positives inside
  # libstdc++ (std::regex, std::function, std::string at -O3) depending on
  # -O level, -march and sanitizers; keep them visible as warnings but do not
  # let them break the build.
  target_compile_options(hft_options INTERFACE $<$<CXX_COMPILER_ID:GNU>:-Wno-error=maybe-uninitialized>
                                               $<$<CXX_COMPILER_ID:GNU>:-Wno-error=restrict>)
endif()
if(HFT_NATIVE)
  target_compile_options(hft_options INTERFACE -march=native)
endif()
if(HFT_SANITIZE)
  target_compile_options(hft_options INTERFACE -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  target_link_options(hft_options INTERFACE -fsanitize=address,undefined)
endif()

# hft_add_layer(NAME <layer> SOURCES ... DEPS ...)
# One static library per layer, aliased hft::<layer>, public headers from include/.
# WIRE marks layers that must build without exceptions (HFT_NO_EXCEPTIONS).
function(hft_add_layer)
  cmake_parse_arguments(L "WIRE" "NAME" "SOURCES;DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(hft_${L_NAME} STATIC ${L_SOURCES})
  add_library(hft::${L_NAME} ALIAS hft_${L_NAME})
  set_target_properties(hft_${L_NAME} PROPERTIES EXPORT_NAME ${L_NAME} OUTPUT_NAME hft_${L_NAME}
                        POSITION_INDEPENDENT_CODE ON)
  target_include_directories(hft_${L_NAME}
    PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
    PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(hft_${L_NAME} PUBLIC $<BUILD_INTERFACE:hft_options> ${L_DEPS} PRIVATE ${L_PRIVATE_DEPS})
  target_compile_features(hft_${L_NAME} PUBLIC cxx_std_20)
  if(HFT_SANITIZE)
    # An archive compiled with the sanitizers cannot link without their
    # runtimes: that (a link dependency, no compile flag) is all an installed
    # sanitized build hands its consumer.
    target_link_options(hft_${L_NAME} INTERFACE $<INSTALL_INTERFACE:-fsanitize=address,undefined>)
  endif()
  if(L_WIRE AND HFT_NO_EXCEPTIONS)
    target_compile_options(hft_${L_NAME} PRIVATE -fno-exceptions)
  endif()
  install(TARGETS hft_${L_NAME} EXPORT libhftTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
endfunction()

# hft_add_test(NAME <name> SOURCES ... DEPS ... LABELS ...)
function(hft_add_test)
  cmake_parse_arguments(T "" "NAME" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE ${T_DEPS} GTest::gtest GTest::gtest_main)
  target_include_directories(${T_NAME} PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/tests)
  target_compile_definitions(${T_NAME} PRIVATE
    HFT_SHARED_DIR="${HFT_SHARED_DIR}" HFT_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  if(NOT T_LABELS)
    set(T_LABELS unit)
  endif()
  gtest_discover_tests(${T_NAME} PROPERTIES LABELS "${T_LABELS}" DISCOVERY_TIMEOUT 60)
endfunction()
