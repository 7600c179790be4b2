# CommTests: the one-rank communicator, the watchdog, the timeout's checks
# and checkSameEverywhere's message (runtime/lib/comm); no mpirun needed.
emb_unit_test(CommTests ${CMAKE_CURRENT_SOURCE_DIR}/comm/SelfCommunicatorTest.cpp)
target_link_libraries(CommTests PRIVATE EmbComm)
target_include_directories(CommTests PRIVATE ${PROJECT_SOURCE_DIR}/runtime/lib/comm)
find_package(MPI COMPONENTS C QUIET)
if(NOT MPI_C_FOUND)
  target_compile_definitions(CommTests PRIVATE EMBC_TEST_WITHOUT_MPI)
endif()

# CommNcclTests: NCCL over a one-rank bootstrap, on device buffers where a
# GPU is present (else the factory's error); built where EmbComm has NCCL, so
# the NCCL communicator is linked into a program in CI.
if(EMBC_HAVE_CUDA AND NCCL_LIBRARY AND NCCL_INCLUDE_DIR)
  emb_unit_test(CommNcclTests ${CMAKE_CURRENT_SOURCE_DIR}/comm/NcclCommunicatorTest.cpp)
  target_link_libraries(CommNcclTests PRIVATE EmbComm CUDA::cudart_static)
endif()

# The MPI communicator under mpirun on 2 and 3 ranks, and the failure
# behaviour: a job whose rank 1 hangs, dies or leaves early must end
# non-zero within the comm timeout plus a few seconds. Only where an MPI and
# its launcher are found (EmbComm builds without MPI).
find_package(Python3 COMPONENTS Interpreter QUIET)
if(MPI_C_FOUND AND MPIEXEC_EXECUTABLE)
  # OpenMPI's mpirun refuses to run as root (CI containers) and to start
  # more ranks than cores without these flags; other launchers need neither.
  execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE embc_mpiexec_version
                  ERROR_QUIET)
  set(embc_mpiexec ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG})
  set(embc_mpiexec_flags ${MPIEXEC_PREFLAGS})
  if(embc_mpiexec_version MATCHES "Open MPI|OpenRTE")
    list(APPEND embc_mpiexec_flags --allow-run-as-root --oversubscribe)
  endif()

  # A gtest program run under mpirun on 2 and 3 ranks as unit.TAG.mpi.npN
  # (every rank runs every test in the same order); `comm_timeout` is the
  # watchdog's, so a mismatched collective ends the job before ctest's
  # `timeout` does.
  function(embc_mpi_gtest name tag source libs timeout comm_timeout)
    add_executable(${name} ${source})
    target_link_libraries(${name} PRIVATE ${libs} GTest::gtest_main)
    set_property(GLOBAL APPEND PROPERTY EMB_UNIT_TESTS ${name})
    foreach(np 2 3)
      add_test(NAME unit.${tag}.mpi.np${np}
               COMMAND ${embc_mpiexec} ${np} ${embc_mpiexec_flags} $<TARGET_FILE:${name}>
                       ${MPIEXEC_POSTFLAGS})
      set_tests_properties(unit.${tag}.mpi.np${np} PROPERTIES TIMEOUT ${timeout} PROCESSORS ${np}
                           ENVIRONMENT EMBC_COMM_TIMEOUT=${comm_timeout})
    endforeach()
  endfunction()

  embc_mpi_gtest(CommMpiTests comm ${CMAKE_CURRENT_SOURCE_DIR}/comm/MpiCommunicatorTest.cpp
                 EmbComm 60 20)
  # The grouped exchanges of sharded tables (-emb-batch-exchanges) against
  # the per-table ones, on the same ranks.
  embc_mpi_gtest(ShardGroupMpiTests shard_group ${CMAKE_CURRENT_SOURCE_DIR}/comm/ShardGroupTest.cpp
                 "EmbExec;EmbComm" 120 60)

  if(Python3_Interpreter_FOUND)
    add_executable(comm-failure-probe ${CMAKE_CURRENT_SOURCE_DIR}/comm/CommFailureProbe.cpp)
    target_link_libraries(comm-failure-probe PRIVATE EmbComm)
    set_property(GLOBAL APPEND PROPERTY EMB_UNIT_TESTS comm-failure-probe)
    foreach(mode hang kill exit late)
      set(embc_expect)
      # A hung or departed rank is noticed by rank 0's watchdog; a killed one
      # may be noticed by mpirun first, so only the exit code is checked. A
      # rank that never starts leaves rank 0 in MPI's init (or its first
      # handshake, by implementation), which the watchdog watches too.
      if(mode STREQUAL "late")
        set(embc_expect --expect "for its peers: a rank died or hangs" --expect "aborting the job")
      elseif(NOT mode STREQUAL "kill")
        set(embc_expect --expect "embrun: rank 0: allReduce (4.0 MiB) waited"
                        --expect "for its peers: a rank died or hangs" --expect "aborting the job")
      endif()
      add_test(NAME unit.comm.failure.${mode}
               COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/comm/comm_failure_test.py
                       --limit 10 ${embc_expect} --
                       ${embc_mpiexec} 2 ${embc_mpiexec_flags}
                       $<TARGET_FILE:comm-failure-probe> ${MPIEXEC_POSTFLAGS} ${mode})
      set_tests_properties(unit.comm.failure.${mode} PROPERTIES TIMEOUT 30 PROCESSORS 2
                           ENVIRONMENT EMBC_COMM_TIMEOUT=3)
    endforeach()
  endif()
endif()
