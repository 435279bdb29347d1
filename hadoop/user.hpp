#pragma once

// The user a SIMPLE-auth connection claims, as Hadoop picks it:
// HADOOP_USER_NAME, else USER, else the OS account of this process.

#include <string>

namespace tony::hadoop {

std::string current_user();

} // namespace tony::hadoop
