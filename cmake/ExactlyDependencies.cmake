# Every dependency is a Debian 12 package; scripts/setup.sh installs them.
find_package(Threads REQUIRED)
find_package(absl REQUIRED)       # Status/StatusOr, strings, synchronization, flags
find_package(PkgConfig REQUIRED)
pkg_check_modules(RDKAFKA REQUIRED IMPORTED_TARGET rdkafka)  # the Kafka client the SDK wraps
if(EXACTLY_SANITIZE MATCHES "thread")
  # librdkafka's C11 threads and locks, routed through the pthread functions TSan intercepts
  # (tests/support/tsan_c11_threads.c says why); every program that links librdkafka gets it.
  add_library(exactly_tsan_c11_threads SHARED
              ${PROJECT_SOURCE_DIR}/tests/support/tsan_c11_threads.c)
  target_link_libraries(exactly_tsan_c11_threads PRIVATE Threads::Threads)
  set_property(TARGET PkgConfig::RDKAFKA APPEND PROPERTY INTERFACE_LINK_LIBRARIES
               exactly_tsan_c11_threads)
endif()
find_package(ZLIB REQUIRED)       # gzip record batches
pkg_check_modules(ZSTD REQUIRED IMPORTED_TARGET libzstd)     # zstd record batches
pkg_check_modules(LZ4 REQUIRED IMPORTED_TARGET liblz4)       # lz4 record batches
find_library(SNAPPY_LIBRARY snappy REQUIRED)                 # snappy record batches
# RocksDB's exported static target drags in gflags/bz2 targets Debian does not export; the
# shared library carries its own dependencies.
find_library(ROCKSDB_LIBRARY rocksdb REQUIRED)
find_path(ROCKSDB_INCLUDE_DIR rocksdb/db.h REQUIRED)
add_library(exactly_rocksdb INTERFACE)
target_link_libraries(exactly_rocksdb INTERFACE ${ROCKSDB_LIBRARY})
target_include_directories(exactly_rocksdb SYSTEM INTERFACE ${ROCKSDB_INCLUDE_DIR})
# Asio (standalone, header-only): the broker's event loop and sockets.
find_path(ASIO_INCLUDE_DIR asio.hpp REQUIRED)
add_library(exactly_asio INTERFACE)
target_include_directories(exactly_asio SYSTEM INTERFACE ${ASIO_INCLUDE_DIR})
# ASIO_DISABLE_STD_ALIGNED_ALLOC: asio decides between aligned_alloc/free and operator
# new/delete from a libstdc++ macro that is only defined once some standard header was
# included, so translation units that include asio first pick the other pair: memory
# allocated in one is freed in another (AddressSanitizer: alloc-dealloc-mismatch). One
# choice for every translation unit.
target_compile_definitions(exactly_asio INTERFACE ASIO_STANDALONE ASIO_NO_DEPRECATED
                                                  ASIO_DISABLE_STD_ALIGNED_ALLOC)
# OpenSSL (Debian's libssl-dev): TLS listeners through asio::ssl, and SCRAM's
# hashes for the broker's SASL.
find_package(OpenSSL REQUIRED)
target_link_libraries(exactly_asio INTERFACE Threads::Threads OpenSSL::SSL OpenSSL::Crypto)
if(EXACTLY_BUILD_TESTS)
  find_package(GTest REQUIRED)
  include(GoogleTest)
endif()
if(EXACTLY_BUILD_BENCH)
  find_package(benchmark REQUIRED)
endif()
