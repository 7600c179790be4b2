# MetricsTests: AUC/RMSE/accuracy, the bounded sample they are computed on,
# peak memory, console formatting and the JSON-lines log.
emb_unit_test(MetricsTests
  ${CMAKE_CURRENT_SOURCE_DIR}/metrics/EvalMetricsTest.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/metrics/ReporterTest.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/metrics/ReservoirSampleTest.cpp
)
target_link_libraries(MetricsTests PRIVATE EmbMetrics nlohmann_json::nlohmann_json)
