// test_train_threads.cpp — data-parallel training (train.h's threads, thread_pool.h):
//  - one thread is the single-threaded step bit for bit (and so is a step split one way in parts);
//  - the same thread count gives the same bits run after run;
//  - two and three threads agree with one within the stated tolerance (below);
//  - a step in parts (begin_step, shard_gradients in another model, add_shard, finish_step: the
//    page's workers) gives the bits of the same count of threads;
//  - mirrors (mirror_shard, then add_shard of the other shares) keep the leader's bits;
//  - a checkpoint saved with n threads resumes with any m, exactly as a run that changed count;
//  - the evaluation in parts (begin_evaluate, validation_losses in another model, add_evaluate,
//    finish_evaluate: the page's workers) and on threads is evaluate()'s, bit for bit, for any count;
//  - bad counts and shares out of order are refused by name; the pool rethrows a thread's error.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "api/checkpoint.h"
#include "core/model/train.h"
#include "gpt_test_util.h"
#include "input_error_util.h"

namespace {

using gpt_test_util::quick_train;
using gpt_test_util::task;
using gpt_test_util::tiny_block;

struct Run {
  std::vector<float> losses, norms;
  std::vector<float> params;
};

Run train(int threads, int steps, ap::Trainer* t = nullptr) {
  ap::Trainer own(tiny_block(32), quick_train(40, 8), task("sort"));
  ap::Trainer& tr = t ? *t : own;
  if (threads > 0) tr.set_threads(threads);
  Run r;
  for (int i = 0; i < steps; ++i) {
    const ap::StepResult s = tr.step();
    REQUIRE_FALSE(s.diverged);
    r.losses.push_back(s.loss);
    r.norms.push_back(s.grad_norm);
  }
  r.params = tr.state().params;
  return r;
}

}  // namespace

using input_error_util::described;

TEST_CASE("Threads: one thread is the single-threaded step, bit for bit", "[train][threads]") {
  const Run plain = train(0, 12);  // never set_threads: the path every run took before threads
  const Run one = train(1, 12);
  CHECK(plain.losses == one.losses);
  CHECK(plain.norms == one.norms);
  CHECK(plain.params == one.params);
  // The same step in parts, split one way, is the same arithmetic.
  ap::Trainer t(tiny_block(32), quick_train(40, 8), task("sort"));
  std::vector<float> losses;
  for (int i = 0; i < 12; ++i) {
    t.begin_step(1);
    t.own_shard();
    losses.push_back(t.finish_step().loss);
  }
  CHECK(losses == plain.losses);
  CHECK(t.state().params == plain.params);
}

TEST_CASE("Threads: the same count gives the same bits every run", "[train][threads]") {
  for (int n : {2, 3}) {
    const Run a = train(n, 12), b = train(n, 12);
    INFO(n << " threads");
    CHECK(a.losses == b.losses);
    CHECK(a.params == b.params);
  }
}

// The tolerance. Each token's forward is row-wise (its loss does not depend on the split: the
// first step's loss is the same bits), but the weight gradients are sums over the batch's rows,
// and n shares regroup each sum into n partial sums added at the end: within the fast tier's
// bound for a sum in another order, 2·(K+8)·u·Σ|terms| (kernels.h), K = B·T rows here. AdamW then
// divides m by √v, so a gradient near zero can move its parameter's update by far more than its own
// rounding; the runs drift apart slowly. Measured (AVX-512, this test's 12 steps of sort at batch
// 8): the losses differ by at most 1.1e-7 relative, the gradient norms by 3.0e-6 relative and the
// parameters by 1.3e-5 absolute (updates are lr ≈ 3e-3 each). The bounds below leave a factor of
// 8–100: 1e-5 relative on the losses, 1e-4 relative on the gradient norms, 1e-4 absolute on the
// parameters (3% of one step's update).
TEST_CASE("Threads: two and three threads agree with one within the stated tolerance", "[train][threads]") {
  const Run one = train(1, 12);
  for (int n : {2, 3}) {
    const Run many = train(n, 12);
    INFO(n << " threads");
    CHECK(many.losses[0] == one.losses[0]);  // the forward is row-wise: the same bits
    float loss_rel = 0.0f, norm_rel = 0.0f, param_abs = 0.0f;
    for (size_t i = 0; i < one.losses.size(); ++i) {
      loss_rel = std::max(loss_rel, std::fabs(many.losses[i] - one.losses[i]) / one.losses[i]);
      norm_rel = std::max(norm_rel, std::fabs(many.norms[i] - one.norms[i]) / one.norms[i]);
    }
    for (size_t i = 0; i < one.params.size(); ++i)
      param_abs = std::max(param_abs, std::fabs(many.params[i] - one.params[i]));
    INFO("losses within " << loss_rel << " relative, gradient norms " << norm_rel << ", parameters " << param_abs);
    CHECK(loss_rel <= 1e-5f);
    CHECK(norm_rel <= 1e-4f);
    CHECK(param_abs <= 1e-4f);
    CHECK(many.params != one.params);  // the split does change the sums' rounding: this compares something
  }
}

TEST_CASE("Threads: a step in parts (the page's workers) gives the bits of as many threads", "[train][threads]") {
  const Run threads = train(2, 8);
  ap::Trainer main(tiny_block(32), quick_train(40, 8), task("sort"));
  ap::Trainer worker(tiny_block(32), quick_train(40, 8), task("sort"));  // another worker's model: parameters sent each step
  const int B = 8, T = 32;
  std::vector<float> losses;
  for (int i = 0; i < 8; ++i) {
    main.begin_step(2);
    main.own_shard();
    ap::GPT& w = worker.model();
    std::copy(main.model().params(), main.model().params() + w.num_parameters(), w.params());
    const int r0 = ap::shard_row(B, 2, 1), rows = B - r0;
    ap::shard_gradients(w, main.batch_ids().data() + r0 * T, main.batch_targets().data() + r0 * T, rows, T, B);
    main.add_shard(w.grads(), w.num_parameters(), w.losses(), int64_t(rows) * T);
    losses.push_back(main.finish_step().loss);
  }
  CHECK(losses == threads.losses);
  CHECK(main.state().params == threads.params);
}

TEST_CASE("Threads: mirrors that step with the leader keep its bits (share 0 copied, not added)", "[train][threads]") {
  // The page's workers when only gradients travel: a leader (own_shard) and mirrors 1 and 2
  // (mirror_shard), each given the other shares in order; all three step as step() on 3 threads.
  const Run threads = train(3, 8);
  const int B = 8, T = 32, n = 3;
  ap::Trainer leader(tiny_block(32), quick_train(40, 8), task("sort"));
  ap::Trainer m1(tiny_block(32), quick_train(40, 8), task("sort"));
  ap::Trainer m2(tiny_block(32), quick_train(40, 8), task("sort"));
  ap::Trainer* mirrors[] = {&m1, &m2};
  std::vector<float> losses[3];
  for (int i = 0; i < 8; ++i) {
    leader.begin_step(n);
    for (ap::Trainer* m : mirrors) m->begin_step(n);
    leader.own_shard();
    m1.mirror_shard(1);
    m2.mirror_shard(2);
    // what each sends: its share's gradients and per-token losses
    const int64_t np = leader.model().num_parameters();
    std::vector<float> grads[3], share_losses[3];
    grads[0].assign(leader.model().grads(), leader.model().grads() + np);
    for (int k = 0; k < n; ++k) {
      const int r0 = ap::shard_row(B, n, k), r1 = ap::shard_row(B, n, k + 1);
      const ap::Trainer& from = k == 0 ? leader : *mirrors[k - 1];
      if (k > 0) grads[k] = from.mirror_grads();
      share_losses[k].assign(from.batch_losses().begin() + r0 * T, from.batch_losses().begin() + r1 * T);
    }
    for (int k = 1; k < n; ++k)
      leader.add_shard(grads[k].data(), np, share_losses[k].data(), int64_t(share_losses[k].size()));
    for (int j = 0; j < 2; ++j)
      for (int k = 0; k < n; ++k)
        if (k != j + 1)  // a mirror's own share is added in its turn by add_shard
          mirrors[j]->add_shard(grads[k].data(), np, share_losses[k].data(), int64_t(share_losses[k].size()));
    losses[0].push_back(leader.finish_step().loss);
    losses[1].push_back(m1.finish_step().loss);
    losses[2].push_back(m2.finish_step().loss);
  }
  for (int j = 0; j < 3; ++j) {
    INFO("worker " << j << " (0: the leader)");
    CHECK(losses[j] == threads.losses);
  }
  CHECK(leader.state().params == threads.params);
  CHECK(m1.state().params == threads.params);
  CHECK(m2.state().params == threads.params);
}

TEST_CASE("Threads: a checkpoint saved with n threads resumes with any m", "[train][threads]") {
  // One run changes from 2 threads to 3 at step 6; another saves at step 6 with 2 threads and
  // resumes from the checkpoint's bytes with 3: the same bits.
  ap::Trainer a(tiny_block(32), quick_train(40, 8), task("sort"));
  train(2, 6, &a);
  const std::string bytes = ap::save_checkpoint(a.state());
  const Run rest = train(3, 6, &a);
  ap::Trainer b(ap::load_checkpoint(bytes));
  const Run resumed = train(3, 6, &b);
  CHECK(resumed.losses == rest.losses);
  CHECK(resumed.params == rest.params);
  // and with 1 thread, within the tolerance of the test above
  ap::Trainer c(ap::load_checkpoint(bytes));
  const Run single = train(1, 6, &c);
  for (size_t i = 0; i < rest.losses.size(); ++i) CHECK(std::fabs(single.losses[i] - rest.losses[i]) <= 1e-5f * rest.losses[i]);
}

TEST_CASE("Threads: bad counts and shares out of order are refused by name", "[train][threads][errors]") {
  ap::Trainer t(tiny_block(32), quick_train(40, 8), task("sort"));
  CHECK(described([&] { t.set_threads(0); }).rfind("threads: threads is 0", 0) == 0);
  CHECK(described([&] { t.set_threads(ap::kMaxThreads + 1); }).rfind("threads: ", 0) == 0);
  CHECK(t.threads() == 1);
  t.set_threads(16);  // more threads than the batch's 8 rows: 8 get a share
  CHECK_FALSE(t.step().diverged);
  CHECK(described([&] { t.begin_step(9); }).rfind("shares: a step split 9 ways", 0) == 0);
  CHECK(described([&] { (void)t.finish_step(); }).rfind("gradients: ", 0) == 0);
  const std::vector<float> g(static_cast<size_t>(t.model().num_parameters())), l(4 * 32);
  CHECK(described([&] { t.add_shard(g.data(), int64_t(g.size()), l.data(), int64_t(l.size())); }).rfind("gradients: no share", 0) == 0);
  t.begin_step(2);
  CHECK(described([&] { t.add_shard(g.data(), int64_t(g.size()), l.data(), int64_t(l.size())); }).rfind("gradients: no share", 0) == 0);
  t.own_shard();
  CHECK(described([&] { t.add_shard(g.data(), 5, l.data(), int64_t(l.size())); }) ==
        "gradients: share 1 has 5 gradients: the model has " + std::to_string(g.size()) + " parameters");
  CHECK(described([&] { t.add_shard(g.data(), int64_t(g.size()), l.data(), 3); }) ==
        "losses: share 1 has 3 losses: its 4 rows of 32 tokens have 128");
  CHECK(described([&] { (void)t.finish_step(); }) == "gradients: the step has 1 of its 2 shares");
  t.add_shard(g.data(), int64_t(g.size()), l.data(), int64_t(l.size()));
  CHECK_FALSE(t.finish_step().diverged);
  CHECK(t.steps_done() == 2);
}

TEST_CASE("Threads: the evaluation in parts or on threads is evaluate()'s, bit for bit", "[train][threads]") {
  ap::TrainConfig c = quick_train(40, 8);
  c.eval_batches = 5;  // 5 batches: split 2, 3 and 4 ways, the shares are uneven
  ap::Trainer main(tiny_block(32), c, task("sort"));
  train(0, 4, &main);
  REQUIRE(main.eval_batches() == 5);
  const float whole = main.evaluate();
  ap::Trainer worker(tiny_block(32), c, task("sort"));  // another worker's model: the parameters sent
  ap::GPT& w = worker.model();
  std::copy(main.model().params(), main.model().params() + w.num_parameters(), w.params());
  const int B = 8, T = 32;
  for (int n : {1, 2, 3, 4, 5, 9}) {
    INFO(n << " shares");
    const int s = main.begin_evaluate(n);
    CHECK(s == std::min(n, 5));
    main.own_evaluate();
    for (int k = 1; k < s; ++k) {
      const int b0 = ap::shard_row(5, s, k), count = ap::shard_row(5, s, k + 1) - b0;
      std::vector<float> losses(static_cast<size_t>(count));
      const int64_t at = int64_t(b0) * B * T;
      ap::validation_losses(w, losses.data(), main.eval_ids().data() + at, main.eval_targets().data() + at, count, B, T);
      main.add_evaluate(losses.data(), count);
    }
    const float parts = main.finish_evaluate();
    CHECK(std::memcmp(&parts, &whole, sizeof whole) == 0);
    CHECK(main.last_val_loss() == whole);
  }
  for (int n : {2, 3, 16}) {
    INFO(n << " threads");
    main.set_threads(n);
    const float threads = main.evaluate();
    CHECK(std::memcmp(&threads, &whole, sizeof whole) == 0);
  }
  // the step after an evaluation on threads: as the same count's step without one
  ap::Trainer other(tiny_block(32), c, task("sort"));
  train(0, 4, &other);
  other.set_threads(16);
  CHECK(train(0, 3, &main).params == train(0, 3, &other).params);
  // refused by name, and the run stays usable
  CHECK(described([&] { main.begin_evaluate(0); }).rfind("shares: an evaluation split 0 ways", 0) == 0);
  const std::vector<float> l(5);
  CHECK(described([&] { main.own_evaluate(); }).rfind("losses: no evaluation is begun", 0) == 0);
  CHECK(described([&] { main.add_evaluate(l.data(), 2); }).rfind("losses: no share of the evaluation", 0) == 0);
  main.begin_evaluate(2);
  CHECK(described([&] { main.add_evaluate(l.data(), 2); }).rfind("losses: no share of the evaluation", 0) == 0);
  main.own_evaluate();
  CHECK(described([&] { main.add_evaluate(l.data(), 2); }) ==
        "losses: share 1 of the evaluation has 2 losses: it has 3 validation batches");
  CHECK(described([&] { (void)main.finish_evaluate(); }) == "losses: the evaluation has 1 of its 2 shares");
  CHECK(std::isfinite(main.evaluate()));
}

TEST_CASE("ThreadPool: every index runs once, a thread's error reaches the caller", "[threads]") {
  ap::ThreadPool pool(4);
  std::vector<int> hits(4, 0);
  auto count = [&](int i) { hits[static_cast<size_t>(i)] += 1; };
  for (int r = 0; r < 50; ++r) pool.run(count);
  CHECK(hits == std::vector<int>(4, 50));
  auto fail = [](int i) {
    if (i == 2) throw std::runtime_error("share 2 failed");
  };
  CHECK_THROWS_WITH(pool.run(fail), "share 2 failed");
  pool.run(count);  // and the pool still works
  CHECK(hits[3] == 51);
  CHECK(ap::hardware_threads() >= 1);
}
