# MetricsTests: AUC/RMSE/accuracy, peak memory, console formatting and the
# JSON-lines log.
emb_unit_test(MetricsTests
  ${CMAKE_CURRENT_SOURCE_DIR}/metrics/EvalMetricsTest.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/metrics/ReporterTest.cpp
)
target_link_libraries(MetricsTests PRIVATE EmbMetrics nlohmann_json::nlohmann_json)
