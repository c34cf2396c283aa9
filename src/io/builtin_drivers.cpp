// The drivers b2lazy ships. Adding a format: its folder, and one line here. (An explicit
// list: self-registering objects in a static library are dropped by the linker.)
#include "io/builtin_drivers.hpp"

namespace b2lazy {

Driver b2nd_driver();         // storage/b2nd_driver.cpp
Driver zarr_driver();         // io/zarr/zarr_driver.cpp
Driver zarr_region_driver();  // io/zarr/zarr_region_sink.cpp
Driver b2z_driver();          // io/b2z/b2z_driver.cpp
Driver hdf5_driver();         // io/hdf5/h5_driver.cpp

std::vector<Driver> builtin_drivers() {
  std::vector<Driver> ds;
  ds.push_back(b2nd_driver());
  ds.push_back(zarr_driver());
  ds.push_back(zarr_region_driver());
  ds.push_back(b2z_driver());
  ds.push_back(hdf5_driver());
  return ds;
}

}  // namespace b2lazy
