#pragma once

// The one type-ID block of tony's message types. Registered once per actor
// system by tony::add_message_types (messages/registration.hpp); the AM and
// the executor register the same names, which typed remote handles check.

#include <caf/type_id.hpp>

#include "messages/types.hpp"

CAF_BEGIN_TYPE_ID_BLOCK(tony, caf::first_custom_type_id)

CAF_ADD_TYPE_ID(tony, (tony::task_id))
CAF_ADD_TYPE_ID(tony, (tony::resource))
CAF_ADD_TYPE_ID(tony, (tony::container_ask))
CAF_ADD_TYPE_ID(tony, (tony::container))
CAF_ADD_TYPE_ID(tony, (tony::container_completion))
CAF_ADD_TYPE_ID(tony, (tony::am_registration))
CAF_ADD_TYPE_ID(tony, (tony::rm_registration))
CAF_ADD_TYPE_ID(tony, (tony::allocate_request))
CAF_ADD_TYPE_ID(tony, (tony::allocate_response))
CAF_ADD_TYPE_ID(tony, (tony::final_report))
CAF_ADD_TYPE_ID(tony, (tony::local_resource))
CAF_ADD_TYPE_ID(tony, (tony::launch_spec))
CAF_ADD_TYPE_ID(tony, (tony::executor_hello))
CAF_ADD_TYPE_ID(tony, (tony::registration_ack))
CAF_ADD_TYPE_ID(tony, (tony::cluster_spec))
CAF_ADD_TYPE_ID(tony, (tony::task_exit))
CAF_ADD_TYPE_ID(tony, (tony::task_status))
CAF_ADD_TYPE_ID(tony, (tony::job_status))
CAF_ADD_TYPE_ID(tony, (tony::gpu_sample))
CAF_ADD_TYPE_ID(tony, (tony::task_sample))
CAF_ADD_TYPE_ID(tony, (tony::job_tokens))

CAF_END_TYPE_ID_BLOCK(tony)
