#include "zbfs/driver/work_costs_file.hpp"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "zbfs/core/error.hpp"

namespace zbfs {

WorkCosts read_work_costs(const std::string& path) {
  const std::string what = "--work-costs '" + path + "'";
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) throw_usage_error(what + ": it is a folder");
  std::ifstream in(path);
  if (!in) throw_usage_error(what + ": cannot read it: " + std::strerror(errno));
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded()) throw_usage_error(what + " is not a JSON document");
  if (!j.is_object() || !j.contains("seconds_per_unit") || !j["seconds_per_unit"].is_object()) {
    throw_usage_error(what + " has no \"seconds_per_unit\" object (zbfs-lab calibrate writes one)");
  }
  WorkCosts costs;
  for (const auto& [name, value] : j["seconds_per_unit"].items()) {
    const std::optional<WorkKind> kind = work_kind_named(name);
    if (!kind) throw_usage_error(what + " prices an unknown kind of work '" + name + "'");
    if (!value.is_number() || !std::isfinite(value.get<double>()) || value.get<double>() < 0) {
      throw_usage_error(what + ": the price of '" + name + "' is not a number of seconds at least 0");
    }
    costs.seconds_per_unit[static_cast<std::size_t>(*kind)] = value.get<double>();
  }
  return costs;
}

}  // namespace zbfs
