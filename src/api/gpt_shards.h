// gpt_shards.h — the session's data-parallel part (the calls' table's role "shards"): a training
// step, and the evaluation, split across workers that each hold a session (the training page's;
// train.h's step in parts; gpt_shards.cpp). One GptShards lives in each GptSession (shards()) and
// works on its run; its own state is the exchange's buffers and a worker's shard model.
//
// The floats and ints go in as bytes (a Uint8Array over a
// Float32Array's or Int32Array's buffer, little-endian) and come out through the accessors:
//   step_begin(n)           the next step's batch, split n ways → {"step","shares","T","rows" (n + 1
//                            share bounds)}; batch_ids(), batch_targets() (B·T), step_params()
//                            (the parameters the shares must use)
//   step_own()              share 0's forward and backward in this session → {"loss"};
//                            step_grads() its gradients (a view: until step_add), step_losses()
//                            the batch's per-token losses so far (B·T; share k's at rows[k]·T …)
//   step_share(k)           (a mirror: a session loaded from the leader's save(), stepping with
//                            it, train.h's mirror_shard) share k's forward and backward → {"loss"};
//                            step_share_grads(), step_losses(); then step_add for shares 0 … n − 1
//                            but k, in order, and step_finish: the leader's parameters, bit for bit
//   step_add(grads, losses) share k's (k = 1 … n − 1, in order) → {}
//   step_finish()           → train(1)'s answer
//   shard_model(config)     (in a worker) a model of this config, for shard_gradients → {"n_params"}
//   shard_gradients(params, ids, targets, batch_rows)
//                           one share with these parameters → {"loss","rows"}; shard_grads(),
//                            shard_losses()
// The same exchange without bytes through strings (the wasm bindings hand out views of these
// staging areas; web/gpt.js writes a share into them, then calls the *_staged call): stage_floats(n)
// (a share's gradients in the main session, the parameters in a worker's), stage_losses(n),
// stage_ids(n), stage_targets(n) → the area, n values; step_add_staged() and
// shard_gradients_staged(batch_rows) are step_add and shard_gradients on what is staged.
// The evaluation split the same way, by whole validation batches (train.h's evaluation in parts):
//   eval_begin(n)           → {"step","shares" (n, at most the batches),"batches","B","T","bounds"
//                            (shares + 1 bounds, in batches)}; eval_ids(), eval_targets()
//                            (batches·B·T), step_params()
//   eval_own()              share 0's batches in this session → {}
//   eval_add_staged()       share k's batch losses, staged by stage_losses (k = 1 … n − 1, in order) → {}
//   eval_finish()           → evaluate()'s answer, the same bits whatever n
//   shard_evaluate_staged(B, T) (in a worker) the staged ids and targets as batches of B rows of T
//                            tokens, with the staged parameters → {"batches"}; shard_losses() (one
//                            loss a batch)
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "core/model/gpt.h"

namespace ap {

class GptSession;

class GptShards {
 public:
  explicit GptShards(GptSession& session) : s_(session) {}
  GptShards(const GptShards&) = delete;
  GptShards& operator=(const GptShards&) = delete;

  std::string step_begin(int n);
  std::string step_own();
  std::string step_share(int k);
  // step_own's gradients (the model's: valid until the next step_add or step) → n floats at p
  void step_grads(const float*& p, size_t& n);
  const std::vector<float>& step_share_grads() const;
  const std::vector<float>& step_losses() const;
  std::string step_add(const std::string& grads, const std::string& losses);
  std::string step_finish();
  std::string shard_model(const std::string& config_json);
  std::string shard_gradients(const std::string& params, const std::string& ids, const std::string& targets,
                              int batch_rows);
  float* stage_floats(int n);
  float* stage_losses(int n);
  int* stage_ids(int n);
  int* stage_targets(int n);
  std::string step_add_staged();
  std::string shard_gradients_staged(int batch_rows);
  std::string eval_begin(int n);
  std::string eval_own();
  std::string eval_add_staged();
  std::string eval_finish();
  std::string shard_evaluate_staged(int B, int T);
  const std::vector<int>& eval_ids() const;
  const std::vector<int>& eval_targets() const;
  const std::vector<float>& step_params() const { return step_params_; }
  const std::vector<int>& batch_ids() const;
  const std::vector<int>& batch_targets() const;
  const std::vector<float>& shard_grads() const { return shard_grads_; }
  const std::vector<float>& shard_losses() const { return shard_losses_; }

 private:
  GptSession& s_;  // the session this part belongs to (its run)
  std::vector<float> step_params_, shard_grads_, shard_losses_, shard_in_;
  std::vector<int> shard_ids_, shard_targets_;
  std::vector<float> stage_losses_;  // step_add's losses, staged
  std::unique_ptr<GPT> shard_;       // shard_model's
};

}  // namespace ap
