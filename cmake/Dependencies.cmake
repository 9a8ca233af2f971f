# All dependencies come from Debian 12 packages (scripts/deps.sh installs them).
find_package(PkgConfig REQUIRED)
pkg_check_modules(IBUMAD REQUIRED IMPORTED_TARGET libibumad)
pkg_check_modules(IBMAD REQUIRED IMPORTED_TARGET libibmad)
pkg_check_modules(IBNETDISC REQUIRED IMPORTED_TARGET libibnetdisc)
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)
find_package(nlohmann_json 3 CONFIG REQUIRED)
find_package(prometheus-cpp CONFIG REQUIRED)
find_package(CLI11 CONFIG REQUIRED)
find_package(spdlog CONFIG REQUIRED)
find_package(yaml-cpp CONFIG REQUIRED)
find_package(GTest REQUIRED)
find_package(Threads REQUIRED)

# OpenSM headers have no pkg-config file; they include <iba/...>, <complib/...>, <opensm/...>.
find_path(OPENSM_INCLUDE_DIR opensm/osm_event_plugin.h PATHS /usr/include/infiniband REQUIRED)
find_package(ZLIB REQUIRED)
find_package(SQLite3 REQUIRED)  # the state store (api/service/sqlite_db.h)
