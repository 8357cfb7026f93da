# hft_generate_messages(TARGET <name> XML <dictionary.xml> NAMESPACE <ns>
#                       [HEADER <path.hpp>] [MESSAGES <Name>...])
#
# Generates typed messages (writers, readers, enums, a cracker; docs/codec.md,
# "Typed messages") from a QuickFIX-format dictionary at build time, and
# makes <name> a header-only target that provides them: link it and
# #include "<HEADER>" (default: the namespace as a path, "a::b" -> "a/b.hpp").
# MESSAGES limits the header to those messages (and the components and groups
# they use): a smaller header compiles faster.
#
# The generator is spec/codegen/hft_messages.py (Python 3, standard library).
include_guard(GLOBAL)
if(NOT HFT_MESSAGES_GENERATOR)
  set(HFT_MESSAGES_GENERATOR ${CMAKE_CURRENT_LIST_DIR}/../spec/codegen/hft_messages.py)
endif()
# Not REQUIRED: a consumer that never generates messages needs no Python.
find_package(Python3 COMPONENTS Interpreter)

function(hft_generate_messages)
  cmake_parse_arguments(G "" "TARGET;XML;NAMESPACE;HEADER" "MESSAGES" ${ARGN})
  foreach(arg TARGET XML NAMESPACE)
    if(NOT G_${arg})
      message(FATAL_ERROR "hft_generate_messages: ${arg} is required")
    endif()
  endforeach()
  if(NOT TARGET Python3::Interpreter)
    message(FATAL_ERROR "hft_generate_messages: needs a Python 3 interpreter (not found)")
  endif()
  if(G_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "hft_generate_messages: unknown arguments ${G_UNPARSED_ARGUMENTS}")
  endif()
  get_filename_component(xml ${G_XML} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
  if(NOT EXISTS ${xml})
    message(FATAL_ERROR "hft_generate_messages: XML ${xml} does not exist")
  endif()
  if(NOT G_HEADER)
    string(REPLACE "::" "/" G_HEADER ${G_NAMESPACE})
    string(TOLOWER ${G_HEADER} G_HEADER)
    set(G_HEADER ${G_HEADER}.hpp)
  endif()
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/${G_TARGET}_include)
  set(out ${dir}/${G_HEADER})
  get_filename_component(out_dir ${out} DIRECTORY)
  string(REPLACE ";" "," messages "${G_MESSAGES}")
  add_custom_command(OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${out_dir}
    COMMAND Python3::Interpreter ${HFT_MESSAGES_GENERATOR} --xml ${xml} --namespace ${G_NAMESPACE} --out ${out}
            --messages=${messages}
    DEPENDS ${xml} ${HFT_MESSAGES_GENERATOR}
    COMMENT "Generating typed messages ${G_HEADER} from ${G_XML}"
    VERBATIM)
  # An interface library with the header as its source: building it runs the
  # generator, and everything that links it is built after.
  add_library(${G_TARGET} INTERFACE ${out})
  target_include_directories(${G_TARGET} INTERFACE $<BUILD_INTERFACE:${dir}>)
  target_link_libraries(${G_TARGET} INTERFACE hft::codec)
endfunction()
