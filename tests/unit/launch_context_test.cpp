// The executor's contract (runtime/launch_context.hpp): what the AM writes
// into an executor's container environment reads back the same, and a
// malformed environment is refused naming the variable.

#include "runtime/launch_context.hpp"

#include <gtest/gtest.h>

#include "messages/error.hpp"

using namespace tony;

namespace {

job_spec job_of(task_type_spec worker) {
  job_spec job;
  job.framework = "pytorch";
  job.command = "python3 train.py";
  job.env = {{"A", "1"}};
  job.policy.stop_grace_ms = 4000;
  worker.name = "worker";
  worker.command = "python3 train.py --worker";
  worker.env = {{"A", "2"}};
  job.tasks = {worker};
  return job;
}

const am_endpoint am{"application_1_0001", "am.host", 4242, "s3cret"};

// The docker contract the local backend adds, for a job with [docker]
// mounts, network and run options, on a machine with GPUs.
std::map<std::string, std::string> local_docker_env_for_test(job_spec& job) {
  job.input_path = "/data/in";
  job.docker_mounts = {"/scratch:/scratch:ro"};
  job.docker_network = "bridge";
  job.docker_run_options = {"--shm-size=1g", "--ipc=host"};
  auto d = docker_of(job, "worker", {"/etc/hadoop"});
  d.gpus = true;
  return d.to_env();
}

} // namespace

TEST(executor_contract, what_the_am_writes_the_executor_reads) {
  task_type_spec worker;
  worker.spec_signal = 10;
  auto env = executor_env(job_of(worker), {"worker", 1}, 2, 3, am);
  EXPECT_EQ(env.at("A"), "2"); // the type's env wins over [env]
  auto c = executor_contract::from_env(env);
  ASSERT_TRUE(c) << describe(c.error());
  EXPECT_EQ(c->app_id, "application_1_0001");
  EXPECT_EQ(c->am_host, "am.host");
  EXPECT_EQ(c->am_port, 4242);
  EXPECT_EQ(c->secret, "s3cret");
  EXPECT_EQ(c->task, (task_id{"worker", 1}));
  EXPECT_EQ(c->attempt, 2);
  EXPECT_EQ(c->restart, 3);
  EXPECT_EQ(c->framework, "pytorch");
  EXPECT_EQ(c->command, "python3 train.py --worker");
  EXPECT_EQ(c->stop_grace_ms, 4000);
  EXPECT_EQ(c->spec_signal, 10);
  EXPECT_EQ(c->elastic_max, 0);
}

TEST(executor_contract, an_elastic_task_carries_its_range_and_agent_restarts) {
  task_type_spec worker;
  worker.instances = 3;
  worker.elastic_min = 2;
  worker.elastic_max = 3;
  worker.max_restarts = 2;
  auto env = executor_env(job_of(worker), {"worker", 0}, 1, 0, am);
  EXPECT_EQ(env.at("TONY_ELASTIC"), "2:3:6");
  auto c = executor_contract::from_env(env);
  ASSERT_TRUE(c) << describe(c.error());
  EXPECT_EQ(c->elastic_min, 2);
  EXPECT_EQ(c->elastic_max, 3);
  EXPECT_EQ(c->elastic_restarts, 6);
}

TEST(executor_contract, the_secret_and_the_executors_own_variables_stay_private) {
  auto env = executor_env(job_of(task_type_spec{}), {"worker", 0}, 1, 0, am);
  for (auto& [name, value] : env) {
    bool own = name == "TONY_JOB_SECRET" || name == "TONY_AM_ADDRESS" ||
               name == "TONY_TASK_COMMAND" || name == "TONY_STOP_GRACE_MS";
    EXPECT_EQ(executor_contract::is_private(name), own) << name;
  }
}

TEST(executor_contract, a_malformed_environment_names_the_variable) {
  auto env = executor_env(job_of(task_type_spec{}), {"worker", 0}, 1, 0, am);
  auto error_of = [](std::map<std::string, std::string> e) {
    auto c = executor_contract::from_env(e);
    EXPECT_FALSE(c);
    return c ? std::string{} : describe(c.error());
  };
  auto missing = env;
  missing.erase("TONY_TASK_TYPE");
  EXPECT_EQ(error_of(missing), "the container environment lacks TONY_TASK_TYPE; "
                               "tony-executor is started by tony-am, not by hand");
  // The secret may come from the container's token file instead (YARN).
  auto no_secret = env;
  no_secret.erase("TONY_JOB_SECRET");
  EXPECT_TRUE(executor_contract::from_env(no_secret));
  auto bad = env;
  bad["TONY_AM_ADDRESS"] = "am.host";
  EXPECT_EQ(error_of(bad), "TONY_AM_ADDRESS 'am.host' is not host:port; tony-executor is "
                           "started by tony-am, not by hand");
  bad = env;
  bad["TONY_TASK_INDEX"] = "x1";
  EXPECT_NE(error_of(bad).find("TONY_TASK_INDEX is not a number"), std::string::npos);
  bad = env;
  bad["TONY_ELASTIC"] = "3:2:1";
  EXPECT_NE(error_of(bad).find("TONY_ELASTIC '3:2:1' is not min:max:restarts"),
            std::string::npos);
}

TEST(executor_contract, horovod_tensorboard_and_docker_travel_to_the_executor) {
  auto job = job_of(task_type_spec{});
  job.framework = "horovod";
  job.tensorboard.enabled = true;
  job.tensorboard.on = "chief";
  job.docker_image = "team/train:1";
  job.tasks[0].docker_image = "team/train:1";
  auto with_hvd = am;
  with_hvd.horovod_port = 4343;
  auto env = executor_env(job, {"worker", 0}, 1, 0, with_hvd);
  for (auto& [k, v] : local_docker_env_for_test(job))
    env[k] = v;
  auto c = executor_contract::from_env(env);
  ASSERT_TRUE(c) << describe(c.error());
  EXPECT_EQ(c->horovod_rendezvous, "am.host:4343");
  EXPECT_TRUE(c->tensorboard) << "worker:0 is the chief: it reserves TB_PORT";
  EXPECT_EQ(c->docker.image, "team/train:1");
  EXPECT_EQ(c->docker.network, "bridge");
  EXPECT_EQ(c->docker.mounts,
            (std::vector<std::string>{"/etc/hadoop:/etc/hadoop:ro",
                                      "/data/in:/data/in:rw", "/scratch:/scratch:ro"}));
  EXPECT_EQ(c->docker.run_options,
            (std::vector<std::string>{"--shm-size=1g", "--ipc=host"}));
  EXPECT_TRUE(c->docker.gpus);
  for (auto name : {"TONY_HOROVOD_RENDEZVOUS", "TONY_TENSORBOARD", "TONY_DOCKER_IMAGE",
                    "TONY_DOCKER_MOUNTS", "TONY_DOCKER_RUN_OPTIONS", "TONY_DOCKER_GPUS"})
    EXPECT_TRUE(executor_contract::is_private(name)) << name;

  auto worker1 = executor_contract::from_env(executor_env(job, {"worker", 1}, 1, 0, am));
  ASSERT_TRUE(worker1);
  EXPECT_FALSE(worker1->tensorboard) << "only the chief starts TensorBoard";
  EXPECT_TRUE(worker1->horovod_rendezvous.empty()) << "the AM serves none here";
}

TEST(executor_contract, yarn_docker_runtime_environment) {
  auto job = job_of(task_type_spec{});
  job.tasks[0].docker_image = "registry:5000/team/train:1";
  job.input_path = "hdfs:///in"; // not a local path: not mounted
  job.output_path = "/shared/out";
  auto d = docker_of(job, "worker", {"/etc/hadoop/conf", "/usr/lib/jvm/java-17"});
  auto env = yarn_docker_env(d);
  EXPECT_EQ(env.at("YARN_CONTAINER_RUNTIME_TYPE"), "docker");
  EXPECT_EQ(env.at("YARN_CONTAINER_RUNTIME_DOCKER_IMAGE"), "registry:5000/team/train:1");
  EXPECT_EQ(env.at("YARN_CONTAINER_RUNTIME_DOCKER_CONTAINER_NETWORK"), "host");
  EXPECT_EQ(env.at("YARN_CONTAINER_RUNTIME_DOCKER_MOUNTS"),
            "/etc/hadoop/conf:/etc/hadoop/conf:ro,/usr/lib/jvm/java-17:/usr/lib/jvm/"
            "java-17:ro,/shared/out:/shared/out:rw");
  job.tasks[0].docker_image.clear();
  EXPECT_TRUE(yarn_docker_env(docker_of(job, "worker", {})).empty());
}
