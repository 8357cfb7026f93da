# hft_layer_tests(<layer> [DEPS ...]): one test executable per *_test.cpp in
# the calling directory, named <layer>_<file>, labelled "unit".
function(hft_layer_tests layer)
  cmake_parse_arguments(X "" "" "DEPS" ${ARGN})
  file(GLOB tests CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*_test.cpp)
  foreach(src ${tests})
    get_filename_component(name ${src} NAME_WE)
    hft_add_test(NAME ${layer}_${name} SOURCES ${src} DEPS hft::${layer} hft_test_support ${X_DEPS})
  endforeach()
endfunction()
