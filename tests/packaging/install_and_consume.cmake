# cmake -P script of the install_and_consume test (CMakeLists.txt beside it says what it checks).

# Runs one step; a failure ends the test with the step's name and everything it printed.
function(run_step name)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE output ERROR_VARIABLE output)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${name} failed (${rc}):\n${output}")
  endif()
  message(STATUS "${name}: done")
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
set(consumer ${WORK_DIR}/consumer)
set(config_args)
if(WTMAP_CONFIG)
  set(config_args --config ${WTMAP_CONFIG})
endif()

run_step("install" ${CMAKE_COMMAND} --install ${WTMAP_BUILD_DIR} ${config_args} --component Development
                   --prefix ${prefix})

# The build's compiler and CUDA toolkit, so that the consumer links what the libraries were built with.
set(configure_args -G ${GENERATOR} -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=${WTMAP_CONFIG}
                   -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCUDAToolkit_ROOT=${CUDA_TOOLKIT_ROOT})
if(CXX_COMPILER_LAUNCHER)
  list(APPEND configure_args -DCMAKE_CXX_COMPILER_LAUNCHER=${CXX_COMPILER_LAUNCHER})
endif()
run_step("configure examples/consumer" ${CMAKE_COMMAND} -S ${CONSUMER_SOURCE_DIR} -B ${consumer} ${configure_args})

# find_package must have taken the package just installed, not one elsewhere on the system.
file(STRINGS ${consumer}/CMakeCache.txt found REGEX "^wtmap_DIR:")
string(REGEX REPLACE "^wtmap_DIR:[A-Z]*=" "" found "${found}")
get_filename_component(found "${found}" REALPATH)
get_filename_component(expected ${prefix}/${WTMAP_PACKAGE_DIR} REALPATH)
if(NOT found STREQUAL expected)
  message(FATAL_ERROR "find_package(wtmap) took '${found}', not the install in '${expected}'")
endif()

run_step("build examples/consumer" ${CMAKE_COMMAND} --build ${consumer} ${config_args})
set(program ${consumer}/wtmap-consumer)
if(NOT EXISTS ${program})  # multi-configuration generators put it in a folder per configuration
  set(program ${consumer}/${WTMAP_CONFIG}/wtmap-consumer)
endif()
execute_process(COMMAND ${program} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "wtmap-consumer failed (${rc}): its answers above")
endif()
