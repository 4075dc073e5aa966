// gpt.d.ts — types of web/gpt.js, the JavaScript API of the tiny GPT (re-exported by attention.js).
// Hand-written; the names are the core's (src/api/gpt_session.h, src/api/gpt_json.h), snake_case
// where the JSON has it. Reference with examples: docs/api.md, "GPT".

/** The attention options of the stepper, applied to every layer of the model. */
export type Mask = 'strict' | 'inclusive';
export type Softmax = 'stable' | 'naive';
export type TaskName = 'copy' | 'reverse' | 'sort' | 'induction' | 'sums' | 'grammar';

/**
 * The input of {@link Gpt.create}. Every key is optional; unknown keys are refused by name
 * (GptError.field = the key), and so are "task" with "text", and values out of range.
 */
export interface RunSpec {
  /** The model's starting point (default "tiny": n_layer 2, n_embd 64, n_head 4, block_size 64; "small": 4, 128, 4, 128). */
  preset?: 'tiny' | 'small';
  /** Blocks, 1 … 32. */
  n_layer?: number;
  /** Heads per attention layer, 1 … 64; must divide n_embd. */
  n_head?: number;
  /** Embedding width, 1 … 1024. */
  n_embd?: number;
  /** Context length, 1 … 1024. */
  block_size?: number;
  /** "strict" (default): query t sees keys j ≤ t; "inclusive": the tutorials' exercise, j ≥ i + base hidden too. */
  mask?: Mask;
  /** "stable" (default) subtracts the row max before exp; "naive" does not, and overflows (then training diverges). */
  softmax?: Softmax;
  /** A built-in task (default "copy"), generated from the seed; not with text. */
  task?: TaskName;
  /** The task's length in characters. */
  n_chars?: number;
  /**
   * The user's text: a string, or the bytes of a UTF-8 file (invalid UTF-8 is refused with its byte
   * offset). At least block_size + 1 characters, at most 64 MiB, at most 8192 distinct characters.
   */
  text?: string | Uint8Array | ArrayBuffer;
  /** The text's name, for messages and the checkpoint (default "text"). */
  text_name?: string;
  /** Sequences per step, 1 … 1024 (default 16). */
  batch_size?: number;
  /** The run's length: the cosine schedule reaches min_lr here (default 2000). */
  steps?: number;
  /** Peak learning rate (default 0.001). */
  lr?: number;
  /** Final learning rate (default min(1e-4, lr / 10)). */
  min_lr?: number;
  /** Linear warm-up steps (default min(100, steps / 10)). */
  warmup_steps?: number;
  /** AdamW's weight decay, on matrices only (default 0.1). */
  weight_decay?: number;
  beta1?: number;
  beta2?: number;
  /** Clip the gradient's global norm to this (default 1; 0: off). */
  grad_clip?: number;
  /** How often the page should call evaluate() (default 100); kept in the checkpoint. */
  eval_interval?: number;
  /** Validation batches per evaluate() (default 8). */
  eval_batches?: number;
  /** Every this many steps, train() answers the heads' induction and previous-token scores (default 0: never). */
  head_scores_interval?: number;
  /** Integer 0 … 2^53: weights, batches and a task's text (default 1337). Same seed, same numbers. */
  seed?: number;
}

/** The input of {@link GptRun.sample} and {@link GptRun.generateStart}. */
export interface SampleSpec {
  /** Required: at least one character, each in the vocabulary (else GptError, field "prompt", naming it). */
  prompt: string;
  /** 0 … 65536 (default 200). */
  max_new_tokens?: number;
  /** > 0 (default 1); ignored when greedy. */
  temperature?: number;
  /** Keep the k most likely tokens (default 0: all; ties with the k-th are kept too). */
  top_k?: number;
  /** Then keep the smallest set of the most likely whose probabilities reach p: (0, 1] (default 1: all). */
  top_p?: number;
  /** Take the most likely token (the lowest id among ties). */
  greedy?: boolean;
  /** Integer 0 … 2^53 (default 1). */
  seed?: number;
}

/** The input of {@link GptRun.nextToken}. */
export interface NextTokenSpec {
  /** The text whose next token is predicted (its last block_size characters). Absent: the last prompt's logits, reshaped without running the model. */
  prompt?: string;
  /** > 0, at most 100 (default 1). */
  temperature?: number;
  /** 0 … vocabulary size (default 0: all). */
  top_k?: number;
  /** (0, 1] (default 1: all). */
  top_p?: number;
  greedy?: boolean;
  /** How many of the most likely tokens to list, 1 … 8192 (default 10; at most the vocabulary). */
  show?: number;
}

/** One token of a {@link NextToken} answer. */
export interface NextTokenEntry {
  id: number;
  /** The token's text (a space is " ", a newline "\n"). */
  text: string;
  logit: number;
  /** The probability it is drawn with: 0 when top-k or top-p dropped it. */
  p: number;
  /** Its probability after the temperature, before top-k and top-p. */
  p_full: number;
  kept: boolean;
}

/** How a generation step drew its token: the kept tokens' weights laid end to end in id order, [0, sum); coin = u · sum falls in the token's segment [from, to). */
export interface NextTokenDraw {
  token: number;
  /** Its probability when drawn (to − from) / sum; 1 for greedy. */
  p: number;
  /** The uniform number in [0, 1) (0 for greedy: none drawn). */
  u: number;
  coin: number;
  sum: number;
  from: number;
  to: number;
  kept: number;
  greedy: boolean;
}

/** The result of {@link GptRun.surprisal}. */
export interface Surprisal {
  /** Windows of up to block_size predictions; a text's overlap by one token (each window's first token is context only). */
  windows: { offset: number; tokens: string[]; losses: number[]; mean: number }[];
  /** Predicted tokens in all. */
  count: number;
  /** The mean −log p over them: for the validation windows, the validation loss evaluate() gives. */
  mean: number;
  step: number;
}

/** One LayerNorm of a {@link BlockTrace}: out = (x − mean)·rstd·gamma + beta. */
export interface LayerNormStep {
  mean: number;
  /** Σ (x − mean)² / C */
  var: number;
  /** 1 / √(var + ε) */
  rstd: number;
  /** (x − mean)·rstd */
  xhat: number[];
  out: number[];
  gamma: number[];
  /** null for a model without biases. */
  beta: number[] | null;
}

/** One layer of a {@link BlockTrace}. The biases are null for a model without biases. */
export interface BlockTraceLayer {
  ln_1: LayerNormStep;
  q: number[];
  k: number[];
  v: number[];
  /** (visible, C) row by row: the visible positions' k and v (absent for large models, unless this is spec.kv_layer). */
  keys?: number[];
  values?: number[];
  heads: { dots: number[]; scores: number[]; weights: number[]; context: number[] }[];
  atty: number[];
  attn_proj: number[];
  residual2: number[];
  ln_2: LayerNormStep;
  fc: number[];
  act: number[];
  mlp_proj: number[];
  residual3: number[];
  c_attn_b: number[] | null;
  attn_c_proj_b: number[] | null;
  c_fc_b: number[] | null;
  mlp_c_proj_b: number[] | null;
}

/** The result of {@link GptRun.blockTrace}: one position through the whole model, reference tier. */
export interface BlockTrace {
  tokens: string[];
  T: number;
  position: number;
  token: number;
  /** The keys this position attends over. */
  visible: number;
  /** 1/√(head size) */
  scale: number;
  config: GptConfig;
  activation: 'gelu' | 'gelu_new';
  ln_eps: number;
  wte: number[];
  wpe: number[];
  encoded: number[];
  layers: BlockTraceLayer[];
  ln_f: LayerNormStep;
  /** The `show` largest logits with their probabilities. */
  top: { id: number; text: string; logit: number; p: number }[];
  max_logit: number;
  /** Σ exp(logit − max_logit) over the vocabulary. */
  sum_exp: number;
  vocab_size: number;
  /** The next token drawn from this position's logits as generation draws its first (the same seed and options, the same token). */
  sample: BlockTraceSample;
}

/** {@link BlockTrace.sample}: the reshaped distribution (the `show` most likely), the seed and the draw. */
export interface BlockTraceSample extends Omit<NextToken, 'tokens' | 'vocab_size'> {
  seed: number;
  /** The draw, with the drawn token's text and its stretch [cum_from, cum_to) of the cumulative probability, which holds u. */
  draw: NextTokenDraw & { text: string; cum_from: number; cum_to: number };
  /** The drawn token's entry (it may lie past the `show` most likely); rank 0 is the most likely. */
  drawn: { id: number; text: string; logit: number; p: number; p_full: number; rank: number };
}

/** The result of {@link GptRun.nextToken}: the distribution the next token would be drawn from. */
export interface NextToken {
  /** The context's tokens. */
  tokens: string[];
  vocab_size: number;
  /** The options answered. */
  temperature: number;
  top_k: number;
  top_p: number;
  greedy: boolean;
  /** Tokens that may be drawn. */
  kept: number;
  /** Σ p_full over the kept tokens; dropped_mass = the rest (what top-k and top-p took away). */
  kept_mass: number;
  dropped_mass: number;
  /** Of the distribution drawn from, and of the full one (after the temperature), in nats. */
  entropy: number;
  entropy_full: number;
  max_logit: number;
  /** The `show` most likely tokens, most likely first, kept or not. */
  top: NextTokenEntry[];
}

/** One built-in task. */
export interface TaskInfo {
  name: TaskName;
  description: string;
  example: string;
  /** What its attention shows once learned. */
  attention: string;
  /** Its characters. */
  alphabet: string;
  /** The lowest mean loss a perfect predictor reaches (nats per character). */
  loss_floor: number;
}

export interface GptConfig {
  vocab_size: number;
  block_size: number;
  n_layer: number;
  n_head: number;
  n_embd: number;
  mask: Mask;
  softmax: Softmax;
}

export interface TrainConfig {
  batch_size: number;
  steps: number;
  lr: number;
  min_lr: number;
  warmup_steps: number;
  weight_decay: number;
  beta1: number;
  beta2: number;
  grad_clip: number;
  eval_interval: number;
  eval_batches: number;
  /** Present when the run records head scores. */
  head_scores_interval?: number;
}

/** The result of {@link GptRun.info}. */
export interface RunInfo {
  config: GptConfig;
  train: TrainConfig;
  /** The seed as a decimal string (64-bit). */
  seed: string;
  /** A task with its description, or the user's text by name and fingerprint. */
  data:
    | { task: TaskName; n_chars: number; description: string; example: string; attention: string; loss_floor: number }
    | { text_name: string; text_fingerprint: string };
  /**
   * The tokens of the vocabulary as text, in id order: characters, or GPT-2's BPE pieces ([] for a
   * model that reads token ids). For GPT-2's BPE: run.vocab(), fetched once per run (frozen).
   */
  vocab: readonly string[];
  /** "characters" (the playground's tokenizer) or "gpt2-bpe" (GPT-2's byte-level BPE, a model trained elsewhere). */
  tokenizer: 'characters' | 'gpt2-bpe';
  n_params: number;
  /** Steps done. */
  step: number;
  /** The run's planned length. */
  steps: number;
  tokens_per_step: number;
  /** The last validation loss, or null before any evaluate(). */
  val_loss: number | null;
  /** False for a run trained on the user's text and loaded without it: it samples, generates and
   * shows attention, but train() and evaluate() need the text (GptError, field "text"). */
  has_data: boolean;
  diverged: boolean;
  /** Why and at which step training stopped ("" unless diverged). */
  divergence: string;
  /** The kernel tier in use: "reference", or the fast tier's name ("simd128" in wasm). */
  kernels: string;
  /** A fine-tuned run's origin (GptRun.finetune): where the model came from, e.g. "nanoGPT ckpt.pt, iter 5000". */
  base?: string;
}

/**
 * The settings of {@link GptRun.finetune} (every key optional). Defaults: context min(block_size,
 * 128) (at most block_size), batch_size 4, steps 100, lr 1e-4 with min_lr lr/10 (the cosine's end),
 * warmup_steps 0, weight_decay 0.1, beta1 0.9, beta2 0.99, grad_clip 1, eval_interval min(100,
 * steps), eval_batches 8, seed 1337 (the batches'), text_name "text".
 */
export type FinetuneSpec = Pick<RunSpec, 'text_name' | 'batch_size' | 'steps' | 'lr' | 'min_lr' | 'warmup_steps' | 'weight_decay' |
  'beta1' | 'beta2' | 'grad_clip' | 'eval_interval' | 'eval_batches' | 'seed'> & {
  /** Tokens per training window, 1 … the model's block_size. */
  context?: number;
};

/** The result of {@link GptRun.finetuneMemory}, in bytes. */
export interface FinetuneMemory {
  need: number;
  available: number;
  fits: boolean;
  context: number;
  batch_size: number;
  /** When it does not fit: finetune's refusal, with both figures and the setting to lower. */
  error?: string;
  field?: 'context' | 'batch_size' | 'model';
}

/** The result of {@link GptRun.train}. */
export interface TrainResult {
  /** Steps done after the call. */
  step: number;
  /** One per step tried; the diverging step's loss (not finite) is the last. */
  losses: Float32Array;
  /** The learning rate of each step done. */
  lrs: Float32Array;
  /** The gradient's global norm before clipping, per step done. */
  grad_norms: Float32Array;
  diverged: boolean;
  divergence: string;
  /** With the run spec's head_scores_interval: the scores at each such step of this call, [layer][head]. */
  head_scores?: { step: number; induction: number[][]; previous: number[][] }[];
}

/** One step of generation through the KV cache ({@link GptRun.generateStart}, {@link GptRun.generateNext}). */
export interface GenerateStep {
  /** The token just run (the prompt's last, then each new one), its id and text. */
  token: number;
  text: string;
  /** Cached positions the last query attended over besides itself: cache_length − 1. */
  base: number;
  /** Positions in the cache now (≤ block_size). */
  cache_length: number;
  /** True when the context passed block_size: cropped to its last block_size tokens and the cache rebuilt. */
  rebuilt: boolean;
  /** Tokens generated so far. */
  generated: number;
  /** The tokens in the context now, as text. */
  tokens: string[];
  /** max |logits − full_logits|: 0, or float rounding. */
  max_abs_diff: number;
  /** After a draw (not the prompt's step): how the token was drawn. */
  draw?: NextTokenDraw;
  /** After a draw: the distribution it was drawn from (its options, the 16 most likely tokens). */
  distribution?: Omit<NextToken, 'tokens' | 'vocab_size'>;
  /** The logits predicting the next token, from the cache (V). */
  logits: Float32Array;
  /** The same from a full forward pass over the context (V). */
  full_logits: Float32Array;
  /** The last query's attention weights over the cache, (n_layer, n_head, cache_length). */
  cache_attention: Float32Array;
  /** The cached keys, (n_layer, cache_length, n_embd); head h in columns h·head_dim …. */
  cache_keys: Float32Array;
  /** The cached values, (n_layer, cache_length, n_embd). */
  cache_values: Float32Array;
}

/** The result of {@link GptRun.runPrompt}. */
export interface PromptMaps {
  /** The prompt's last block_size characters, one per token. */
  tokens: string[];
  T: number;
  n_layer: number;
  n_head: number;
  /** Every head's attention weights, (n_layer, n_head, T, T), row-major; 0 where masked. */
  weights: Float32Array;
}

/** The result of {@link GptRun.attentionSummary}: the last runPrompt's maps summed up by the core. */
export interface AttentionSummary {
  tokens: string[];
  T: number;
  n_layer: number;
  /** Each layer's heads averaged, (n_layer, T, T). */
  head_mean: Float32Array;
  /** Attention rollout up to each layer (Abnar and Zuidema 2020: ½·mean + ½·I, rows renormalised, multiplied layer by layer), (n_layer, T, T). */
  rollout: Float32Array;
}

/** A head's q, k, v as the stepper's Q, K, V mode: `attention.trace(spec)` recomputes its weights. */
export interface HeadSpec {
  Q: number[][];
  K: number[][];
  V: number[][];
  n_head: 1;
  causal: true;
  mask: Mask;
  softmax: Softmax;
}

/** One model with its data and optimiser state. Methods throw GptError; after free() every one throws (field "run"). */
export interface GptRun {
  /** True once free() has been called. */
  readonly freed: boolean;
  /**
   * Any call of the core's table (Gpt.calls(), a role other than "module") by name, its arguments in
   * the row's order as JS values → the answer with the typed arrays the call leaves under their
   * names (save: its bytes).
   */
  call(name: string, ...args: unknown[]): any;
  // the table's rows web/gpt.js makes methods of (derivedMethods) without a type written here
  // <generated GptRun> by scripts/gen-gpt-api.mjs from the calls' table (src/api/gpt_calls.h): do not edit
  /** `{"name","values"}`: a typed array the last calls left (the names of `calls`'s `results`: `logits`, `attention_weights`, `cache_keys`, …), its values as JSON — what the wasm module hands out as typed arrays (`session.logits()`: a `Float32Array`), for `gpt api`; an unknown name is refused (field `name`) listing them */
  result(name: string | Uint8Array): any;
  /** run_prompt's weights as JSON: `{"tokens","T","n_layer","n_head","maps":[layer][head][T][T]}` */
  attentionMaps(): any;
  /** the [logit lens](#interpretability): `{"tokens","points","top":[point][position][k]{id,text,p},"targets","target_p","target_rank"}` */
  lens(spec: Record<string, unknown> | string): any;
  /** [direct logit attribution](#interpretability): `{"tokens","position","token","other","heads":[layer][head],"mlps","attn_bias","mlp_bias","wte","wpe","ln_f_bias","sum","logit"}` */
  attribute(spec: Record<string, unknown> | string): any;
  /** [ablation](#interpretability): `{"tokens","mode","loss","metric"?,"head_loss","head_metric"?:[layer][head],"mlp_loss","mlp_metric"?}` (ablated − clean) */
  ablate(spec: Record<string, unknown> | string): any;
  /** [activation patching](#interpretability): `{"tokens","corrupted_tokens","clean_metric","corrupted_metric","resid":[layer+1][position],"heads":[layer][head],"mlps"}` (fraction recovered) */
  patch(spec: Record<string, unknown> | string): any;
  /** the same maps to first order (gradient × activation difference) */
  attributionPatch(spec: Record<string, unknown> | string): any;
  /** `{"length","batch","induction":[layer][head],"previous":[layer][head],"sequences"}` */
  headScores(spec: Record<string, unknown> | string): any;
  /** the loaded run's size and memory, in bytes → `{"n_params","parameters" (4 per parameter),"allocated" (the model's buffers now: parameters, gradients, activations, KV cache; AdamW's moments not counted),"training" (a training step at batch_size × context, AdamW's moments counted: what `memory` gives for its spec),"inference" (one sequence of block_size, no gradients),"kv_cache" (the KV cache: keys and values of every layer, block_size × n_kv_head·head_dim floats each),"limit" (a run's: `memory`'s)}` */
  runMemory(): any;
  /** the validation loss at each position of windows of `context` tokens (default block_size; longer than the model was made for with RoPE, ALiBi or no positions; learned positions are refused past block_size, naming wpe), over up to `batches` (default eval_batches) batches → `{"context","block_size","windows","losses" (one per position),"mean"}` */
  lossByPosition(spec: Record<string, unknown> | string): any;
  // </generated>
  info(): RunInfo;
  /**
   * The tokens' texts by id: all of them (a frozen array, fetched from the core once per run), or
   * `count` from id `from` (GptError, field "from" / "count", out of range).
   */
  vocab(from?: number, count?: number): readonly string[];
  /** Up to n steps (1 … 100,000), fewer if the run diverges. */
  train(n: number): TrainResult;
  /** The mean loss over the validation windows (deterministic). */
  evaluate(): { step: number; val_loss: number };
  /** Text from a prompt. text = prompt + new_text; tokens: every token of text. */
  sample(spec: SampleSpec | string): { text: string; new_text: string; tokens: string[] };
  /** Starts generation: the prompt through the KV cache. */
  generateStart(spec: SampleSpec | string): GenerateStep;
  /** One more token through the cache. */
  generateNext(): GenerateStep;
  /** One forward pass over the prompt; then headSpec() reads its heads. */
  runPrompt(prompt: string): PromptMaps;
  /** The last runPrompt's head means per layer and attention rollout, from the core. */
  attentionSummary(): AttentionSummary;
  /** The next-token distribution under temperature, top-k and top-p. */
  nextToken(spec: NextTokenSpec | string): NextToken;
  /** −log p (nats) of every token of a text (at most 65,536 bytes), or of the validation windows. */
  surprisal(spec: { text: string } | { validation: true } | string): Surprisal;
  /** One position of the prompt through the whole model, every step's numbers (reference tier). */
  blockTrace(spec: { prompt: string; position?: number; show?: number; sample?: Omit<SampleSpec, 'prompt' | 'max_new_tokens'>; kv_layer?: number } | string): BlockTrace;
  /** One output's weights (a matmul step's terms); bias null where the model has none. */
  weightRow(spec: { weight: 'c_attn' | 'attn.c_proj' | 'c_fc' | 'mlp.c_proj' | 'lm_head'; layer?: number; row: number } | string): { weight: string; row: number; w: number[]; bias: number | null };
  /** The stepper spec of layer `layer`, head `head` (0-based) for the last runPrompt. */
  headSpec(layer: number, head: number): HeadSpec;
  /** The model's token ids of a text; tokens: each token's text (GPT-2's BPE pieces such as " the", "<0xF0>" for a byte that is not a whole character). */
  encode(text: string): { ids: number[]; tokens: string[] };
  /** The text of token ids (a character cut between tokens shows as U+FFFD); tokens as encode's. */
  decode(ids: ArrayLike<number>): { text: string; tokens: string[] };
  /** The checkpoint as the bytes of a .safetensors file. */
  save(): Uint8Array;
  /**
   * What fine-tuning this model at these settings would take against what there is (in wasm: what
   * the module can still address, at most 3 GiB), checked before anything is allocated.
   * @throws {GptError} naming a bad setting.
   */
  finetuneMemory(spec?: FinetuneSpec | string): FinetuneMemory;
  /**
   * Fine-tunes this model (opened, or a run) on a text read with its own tokenizer: fresh AdamW
   * state; then train(n), evaluate() and save() as any run. Returns the new info (with base).
   * @throws {GptError} field "context" (past block_size, or the memory), "batch_size" or "model"
   * (the memory: both figures in the message), "text" (too short, a character outside the
   * vocabulary, a model of token ids), or a spec key; the model is then as it was.
   */
  finetune(spec: FinetuneSpec | string | undefined, text: string): RunInfo;
  /**
   * Data-parallel training across workers: the next step's batch split `shares` ways (the same
   * batch whatever the split). Then stepOwn(), the workers' GptShard.gradients, stepAdd for shares
   * 1 … shares − 1 in order, stepFinish(). With into, the parameters are copied into each of
   * those arrays (n_params each, reused step after step) and params is left out.
   */
  stepBegin(shares: number, options?: { into?: Float32Array[]; mirror?: boolean }): StepBegin;
  /**
   * Share 0's forward and backward here; loss is the share's mean. With grads (n_params), also
   * its gradients copied there and its per-token losses: what the mirrors' stepAdd takes as share 0.
   */
  stepOwn(options?: { grads?: Float32Array }): { loss: number; grads?: Float32Array; losses?: Float32Array };
  /**
   * A mirror's share k (1 … shares − 1): this run loaded from the leader's save() and stepping
   * with it (stepBegin(shares, {mirror: true}): the same batch, no ids or params made). Its
   * gradients are copied into grads; then stepAdd for the other shares 0 … shares − 1 in order
   * and stepFinish give the leader's parameters, bit for bit.
   */
  stepShare(k: number, options: { grads: Float32Array }): { loss: number; grads: Float32Array; losses: Float32Array };
  /** The next share's gradients (n_params) and per-token losses (its rows · T). */
  stepAdd(grads: Float32Array, losses: Float32Array): void;
  /** Clips, applies AdamW; the answer of train(1). */
  stepFinish(): TrainResult;
  /**
   * evaluate() across workers: the validation batches split `shares` ways (at least 1; at most
   * the batches, the answer's shares) by whole batches. Then evalOwn(), the workers' GptShard.evaluate, evalAdd for shares 1 … shares − 1 in
   * order, evalFinish(): the same bits as evaluate() whatever the split. into: as stepBegin's.
   */
  evalBegin(shares: number, options?: { into?: Float32Array[] }): EvalBegin;
  /** Share 0's validation batches here. */
  evalOwn(): void;
  /** The next share's batch losses (one per validation batch of the share). */
  evalAdd(losses: Float32Array): void;
  /** The answer of evaluate(). */
  evalFinish(): { step: number; val_loss: number };
  /**
   * The threads sharing each training step of this run (1 … gpt.threads; the core's pool, as
   * `gpt train --threads n`). The same n gives the same numbers every time; another n agrees
   * within the fast tier's tolerance. Not in the checkpoint.
   * @throws {GptError} field "threads" outside 1 … gpt.threads.
   */
  setThreads(n: number): { threads: number; cores: number };
  /** Frees the run's wasm memory; a second call does nothing. */
  free(): void;
}

/** What {@link Gpt.openModel} opened: the model file's name, its format, and what the page should say about the files. */
export interface OpenedModel {
  name: string;
  format: 'nanogpt' | 'huggingface' | 'playground' | 'hf-folder' | 'gguf';
  notes: { code: 'no_meta' | 'token_ids' | 'tokenizer_unread' | 'gpt2_bpe' | 'unused' | 'training_checkpoint' | 'no_tokenizer' | 'gguf_no_tokenizer'; file?: string }[];
  /** A Llama-family model (hf-folder, gguf): its weights' bytes as held (the matrices as the files store them, the norms float32). */
  weight_bytes?: number;
  /** A Llama-family model: its matrices' storage types, e.g. ["BF16"] or ["Q4_K", "Q6_K"]. */
  weight_types?: string[];
}

/** The result of {@link GptRun.stepBegin}. */
export interface StepBegin {
  /** The step being taken, counted from 1. */
  step: number;
  shares: number;
  T: number;
  /** shares + 1 bounds: share k is rows rows[k] … rows[k+1] − 1 of the batch. */
  rows: number[];
  /** The batch, batch_size · T tokens each. */
  ids: Int32Array;
  targets: Int32Array;
  /** The parameters every share uses (absent when stepBegin was given into). */
  params?: Float32Array;
}

/** The result of {@link GptRun.evalBegin}. */
export interface EvalBegin {
  /** The steps done. */
  step: number;
  shares: number;
  /** The validation batches, each B rows of T tokens. */
  batches: number;
  B: number;
  T: number;
  /** shares + 1 bounds: share k is batches bounds[k] … bounds[k+1] − 1. */
  bounds: number[];
  /** Every batch, one after the other: batches · B · T tokens each. */
  ids: Int32Array;
  targets: Int32Array;
  /** The parameters every share uses (absent when evalBegin was given into). */
  params?: Float32Array;
}

/** A worker's share of a data-parallel step ({@link Gpt.shard}). */
export interface GptShard {
  /**
   * Forward and backward of whole rows with these parameters, scaled to a batch of batchRows rows.
   * With options.grads (n_params floats; it may be params) the gradients are written there.
   */
  gradients(params: Float32Array, ids: Int32Array, targets: Int32Array, batchRows: number, options?: { grads?: Float32Array }):
    { loss: number; rows: number; grads: Float32Array; losses: Float32Array };
  /** The mean loss of each of whole batches of B rows of T tokens, with these parameters. */
  evaluate(params: Float32Array, ids: Int32Array, targets: Int32Array, B: number, T: number): { batches: number; losses: Float32Array };
  free(): void;
}

/** The result of {@link Gpt.memoryEstimate}. */
export interface MemoryEstimate {
  /** What the run would take, in bytes. */
  bytes: number;
  /** The core's limit on it, in bytes (2^30). */
  limit: number;
}

/** The loaded API. */
/** A row of the core's table of calls (src/api/gpt_calls.h). */
export interface GptCallRow {
  name: string;
  role: 'run' | 'predict' | 'open' | 'shards' | 'module';
  args: { key: string; kind: 'spec' | 'json' | 'text' | 'bytes' | 'whole' | 'number' | 'out'; file?: string }[];
  results: string[];
  api: boolean;
  /** gpt api's help for it (a gpt api call only). */
  example?: string;
  /** One line of Markdown: what it does and answers. */
  doc: string;
  full?: boolean;
  returns?: 'bytes';
}

export interface Gpt {
  /** The core's table of calls: what GptRun.call takes. */
  calls(): GptCallRow[];
  // the module's rows web/gpt.js makes methods of (derivedMethods) without a type written here
  // <generated Gpt> by scripts/gen-gpt-api.mjs from the calls' table (src/api/gpt_calls.h): do not edit
  // </generated>
  tasks(): TaskInfo[];
  /** 'reference': scalar, the same bits natively and in wasm; 'fast': SIMD128. Returns the tier in use. Applies to every run. */
  setKernels(tier: 'reference' | 'fast'): string;
  /**
   * The bytes a run of this spec would take in the core (parameters, gradients, AdamW's moments,
   * the activations of batch_size × block_size, the KV cache) and the core's limit (1 GiB). No run
   * is made; the text, if any, as a string.
   * @throws {GptError} past the limit (field "n_embd" for the model alone, "batch_size" for the batch, the sizes in the message), or a bad spec, as create would.
   */
  memoryEstimate(spec?: RunSpec | string): MemoryEstimate;
  /** A new run. Also takes the spec as JSON text (then text must be inside it, as a string). */
  create(spec?: RunSpec | string): GptRun;
  /**
   * A run from checkpoint bytes. A text run needs its text (string or bytes) to train on.
   * @throws {GptError} a corrupted or mismatched file, naming the byte, tensor or metadata key; nothing else changes.
   */
  load(bytes: Uint8Array | ArrayBuffer, text?: string | Uint8Array | ArrayBuffer): GptRun;
  /**
   * Opens a model trained elsewhere (nanoGPT's ckpt.pt + meta.pkl, a Hugging Face model.safetensors
   * + config.json) or a .safetensors of this project, reading the model file in slices.
   * @throws {GptError} field "memory" for a model that will not fit (before it is read), else the file's name.
   */
  openModel(files: Iterable<File | Blob & { name: string } | { name: string; data: Uint8Array | Blob }>,
    options?: { onProgress?: (p: { loaded: number; total: number; name: string }) => void; chunkBytes?: number }): Promise<GptRun & { opened: OpenedModel }>;
  /** Bytes left for opening a model, the most there can be, and the module's memory now. */
  openMemory(): { left: number; max: number; size: number };
  /**
   * Loads the full module (gpt_core_full: opening models, the walk) if it is not in yet;
   * openModel does it itself, run.blockTrace/weightRow need it done first in a browser (in Node
   * loadGpt has done it). Rejects with GptError field "piece".
   */
  loadFull(): Promise<void>;
  /** The module models are opened and walked in: gpt_core_full once loaded, the threads build itself; null before. */
  readonly openingModule: GptCoreModule | null;
  /** A worker's model of this config (a run's info().config) for data-parallel steps. */
  shard(config: GptConfig): GptShard;
  /** The threads a run may use (run.setThreads): loadGpt's threads; 1 for the single-threaded module. */
  readonly threads: number;
  /** The raw Emscripten module (GptSession, gpt_tasks, gpt_kernels, gpt_memory, heap_bytes_in_use). For tests and tools. */
  readonly module: GptCoreModule;
}

/**
 * The raw session (web/gen/gpt_core.mjs): the calls' table (src/api/gpt_calls.h) registered as
 * methods, arguments positional in the table's order; JSON text out, never a C++ exception.
 * Delete it when done. tests/wasm/gpt_calls.test.mjs checks this list against the module.
 */
export interface GptSessionHandle {
  // <generated GptSessionHandle> by scripts/gen-gpt-api.mjs from the calls' table (src/api/gpt_calls.h): do not edit
  /** a new run from a [run spec](#the-run-spec) → the run's info */
  create(spec: string): string;
  /** a run from a checkpoint → the run's info (`text_path`/`text` only for a text run); also opens a model trained elsewhere (nanoGPT's `ckpt.pt`, Hugging Face's `model.safetensors` with its files beside it, a model-only `.safetensors`) for inference and `finetune` */
  load(checkpoint: Uint8Array | string, text: Uint8Array | string): string;
  /** the run's info: `{"config","train","seed","data","vocab","tokenizer","source","n_params","step","steps","tokens_per_step","val_loss","has_data","diverged","divergence","kernels"}` */
  info(): string;
  /** `{"from","vocab","vocab_size"}`: the tokens' texts from id `from` (0), `count` of them (to the end); `[]` for a model of token ids. `info`'s `"vocab"` lists a character vocabulary only: GPT-2's 50,257 pieces come from here */
  vocab(spec: string): string;
  /** up to `n` steps (1 … 100,000; stops at divergence) → `{"step","losses","lrs","grad_norms","diverged","divergence"}` */
  train(n: number): string;
  /** the mean loss over the validation windows → `{"step","val_loss"}` */
  evaluate(): string;
  /** `{"name","values"}`: a typed array the last calls left (the names of `calls`'s `results`: `logits`, `attention_weights`, `cache_keys`, …), its values as JSON — what the wasm module hands out as typed arrays (`session.logits()`: a `Float32Array`), for `gpt api`; an unknown name is refused (field `name`) listing them */
  result(name: string | Uint8Array): string;
  /** text from a prompt ([the sampling spec](#the-sampling-spec)) → `{"text","new_text","tokens"}` */
  sample(spec: string): string;
  /** runs the prompt (the sampling spec) through the KV cache → the first step (`generate_next`'s answer), leaving the step's logits, attention and cache */
  generate_start(spec: string): string;
  /** one more token through the cache → `{"token","text","base","cache_length","rebuilt","generated","tokens","max_abs_diff"}`, after a draw also `"draw"` and `"distribution"` */
  generate_next(): string;
  /** one forward pass over the prompt (its last block_size tokens) → `{"tokens","T","n_layer","n_head"}`, leaving `attention_weights` (n_layer, n_head, T, T) */
  run_prompt(prompt: string | Uint8Array): string;
  /** the stepper's spec of one head for the last `run_prompt` → `{"spec":{"Q","K","V","n_head":1,"causal":true,"mask","softmax"}}` */
  head_spec(layer: number, head: number): string;
  /** run_prompt's weights as JSON: `{"tokens","T","n_layer","n_head","maps":[layer][head][T][T]}` */
  attention_maps(): string;
  /** run_prompt's maps summed up in the reference order (`src/core/model/inspect.h`): `{"tokens","T","n_layer","head_mean":[layer][T][T],"rollout":[layer][T][T]}` — each layer's heads averaged, and attention rollout (Abnar and Zuidema 2020: ½·mean + ½·I, rows renormalised, multiplied layer by layer) up to each layer; before run_prompt, an error naming `prompt` */
  attention_summary(): string;
  /** the [next-token distribution](#the-next-token-spec) */
  next_token(spec: string): string;
  /** −log p of every token of a text, or of the validation windows (`{"validation":true}`: their mean is `evaluate`'s) → `{"windows":[{"offset","tokens","losses","mean"}],"count","mean","step"}` */
  surprisal(spec: string): string;
  /** the [block walk](#the-block-walk) (the [full module](#the-full-module)) */
  block_trace(spec: string): string;
  /** one output's weights, for the terms of a matmul step → `{"weight","row","w","bias"}` (the [full module](#the-full-module)) */
  weight_row(spec: string): string;
  /** the [logit lens](#interpretability): `{"tokens","points","top":[point][position][k]{id,text,p},"targets","target_p","target_rank"}` */
  lens(spec: string): string;
  /** [direct logit attribution](#interpretability): `{"tokens","position","token","other","heads":[layer][head],"mlps","attn_bias","mlp_bias","wte","wpe","ln_f_bias","sum","logit"}` */
  attribute(spec: string): string;
  /** [ablation](#interpretability): `{"tokens","mode","loss","metric"?,"head_loss","head_metric"?:[layer][head],"mlp_loss","mlp_metric"?}` (ablated − clean) */
  ablate(spec: string): string;
  /** [activation patching](#interpretability): `{"tokens","corrupted_tokens","clean_metric","corrupted_metric","resid":[layer+1][position],"heads":[layer][head],"mlps"}` (fraction recovered) */
  patch(spec: string): string;
  /** the same maps to first order (gradient × activation difference) */
  attribution_patch(spec: string): string;
  /** `{"length","batch","induction":[layer][head],"previous":[layer][head],"sequences"}` */
  head_scores(spec: string): string;
  /** the checkpoint: `gpt api` writes it atomically to `path` → `{"bytes":N}`; the wasm method returns its bytes (a `Uint8Array`, or `null`: then `last_error()` says why) */
  save(): Uint8Array | null;
  /** the loaded run's size and memory, in bytes → `{"n_params","parameters" (4 per parameter),"allocated" (the model's buffers now: parameters, gradients, activations, KV cache; AdamW's moments not counted),"training" (a training step at batch_size × context, AdamW's moments counted: what `memory` gives for its spec),"inference" (one sequence of block_size, no gradients),"kv_cache" (the KV cache: keys and values of every layer, block_size × n_kv_head·head_dim floats each),"limit" (a run's: `memory`'s)}` */
  run_memory(): string;
  /** the validation loss at each position of windows of `context` tokens (default block_size; longer than the model was made for with RoPE, ALiBi or no positions; learned positions are refused past block_size, naming wpe), over up to `batches` (default eval_batches) batches → `{"context","block_size","windows","losses" (one per position),"mean"}` */
  loss_by_position(spec: string): string;
  /** threads sharing each step of this session's runs and an opened model's forward (each Linear layer's columns, the norms and activations by rows, attention by heads, generation's products by columns: the same bits as one thread), 1 by default ([gpt.md](gpt.md#training)) → `{"threads","cores"}`; in wasm up to `loadGpt`'s threads in `gpt_core_mt` (`run.setThreads(n)`), 1 in `gpt_core` (the page's workers use `stepBegin` … `stepFinish`) */
  threads(n: number): string;
  /** the model's token ids of a text → `{"ids","tokens"}` (tokens: each token's text, such as GPT-2's `" the"`) */
  encode(text: string | Uint8Array): string;
  /** the text of token ids → `{"text","tokens"}` */
  decode(ids: string): string;
  /** `{"need","available","fits","context","batch_size"}` (bytes), and when it does not fit `finetune`'s `"error"` and `"field"`: what fine-tuning the loaded model would take, checked before anything is allocated ([import.md](import.md#fine-tuning-a-model-trained-elsewhere)) */
  finetune_memory(spec: string): string;
  /** info, with `"base"`: the loaded model (an opened or imported one, or a run) becomes a run on the text (`"text"` or the file `"text_path"`), fresh AdamW, then `train`, `evaluate`, `save` as any run; refused (the model stays) for a context past block_size (`context`), a text under 2·(context + 1) tokens (`text`), memory (`context`, `batch_size` or `model`, both figures in the message) */
  finetune(spec: string, text: string | Uint8Array): string;
  /** `create` with the text beside the spec, as bytes or a string (the spec then has no `"text"`) → the run's info */
  create_with_text(spec: string, text: Uint8Array | string): string;
  /** starts opening a model file read in slices: spec `{"name","size","config_name","slice"}`, the file's first bytes, a `config.json` or `""`; refuses (field `memory`) what will not fit → `{"size","need","left"}` */
  open_begin(spec: string, head: Uint8Array | string, config: Uint8Array | string): string;
  /** bytes of the file from byte `at`, as `open_plan` asked for them */
  open_piece(at: number, bytes: Uint8Array | string): string;
  /** plans from the bytes given so far → `{"need":[[at,n],…]}`, or once the headers are read makes the model and the slice buffer → `{"read":[[at,n],…],"bytes"}` */
  open_plan(spec: string, meta: Uint8Array | string, config: Uint8Array | string): string;
  /** the slice buffer's first `n` bytes are the next of the ranges → `{"left"}` */
  open_feed(n: number): string;
  /** every range fed: the run becomes the opened model → info with `"opened"` */
  open_finish(): string;
  /** GPT-2's tokenizer files for the model being opened (`tokenizer.json`, or `vocab.json` and `merges.txt`), checked now → `{"vocab_size"}` */
  open_tokenizer(spec: string, first: Uint8Array | string, second: Uint8Array | string): string;
  /** frees the opening under way (and the tokenizer files) */
  open_cancel(): string;
  /** starts opening a Llama-family model of several files: spec `{"name","files":[{"name","size"},…]}` (the `.safetensors` shards or one `.gguf`), the bytes of `config.json`, `model.safetensors.index.json`, `tokenizer.json`, `tokenizer_config.json` (each `""` when not given); a shard the index lists but not given, no `config.json`: refused by name → `{"format","files"}` */
  open_files(spec: string, config: Uint8Array | string, index: Uint8Array | string, tokenizer: Uint8Array | string, tokenizer_config: Uint8Array | string): string;
  /** bytes of `files[file]` from byte `at`, as `open_files_plan` asked for them */
  open_files_piece(file: number, at: number, bytes: Uint8Array | string): string;
  /** plans from the bytes given so far → `{"need":[[file,at,n],…]}`, or once the headers are read checks the model and the memory and makes the buffers for its weights → `{"read":[[file,at,n],…],"bytes"}`, fed with `open_view` / `open_feed`, then `open_finish` */
  open_files_plan(): string;
  /** a training step in `n` shares: the batch split by rows → `{"step","shares","T","rows"}`, leaving the batch and the parameters */
  step_begin(n: number): string;
  /** share 0's forward and backward here → `{"loss"}`, leaving its gradients and per-token losses */
  step_own(): string;
  /** a mirror's share `k` of the step begun → `{"loss"}`, leaving its gradients and losses */
  step_share(k: number): string;
  /** adds the next share's gradients and per-token losses (the bytes of Float32Arrays) */
  step_add(grads: Uint8Array | string, losses: Uint8Array | string): string;
  /** `step_add` from the staging areas `stage_floats` and `stage_losses` */
  step_add_staged(): string;
  /** ends the step: clip, AdamW → `train`'s answer for one step */
  step_finish(): string;
  /** makes this session a helper's model of a run's config (its info's `"config"`) */
  shard_model(config: string): string;
  /** a helper's share: gradients of whole rows (ids, targets) with these parameters, scaled to `batch_rows` → `{"loss","rows"}` */
  shard_gradients(params: Uint8Array | string, ids: Uint8Array | string, targets: Uint8Array | string, batch_rows: number): string;
  /** `shard_gradients` from the staging areas */
  shard_gradients_staged(batch_rows: number): string;
  /** the validation batches split `n` ways → `{"step","shares","batches","B","T","bounds"}`, leaving their ids, targets and the parameters */
  eval_begin(n: number): string;
  /** share 0's validation batches here */
  eval_own(): string;
  /** adds the next share's batch losses from `stage_losses` */
  eval_add_staged(): string;
  /** ends the evaluation → `evaluate`'s answer */
  eval_finish(): string;
  /** a helper's validation batches (B rows of T tokens each) from the staging areas → `{"batches"}`, leaving their losses */
  shard_evaluate_staged(B: number, T: number): string;
  // the results: NAME() a copy, NAME_view() a view into the heap (valid until the next call into the module)
  logits(): Float32Array;
  logits_view(): Float32Array;
  full_logits(): Float32Array;
  full_logits_view(): Float32Array;
  attention_weights(): Float32Array;
  attention_weights_view(): Float32Array;
  attention_mean(): Float32Array;
  attention_mean_view(): Float32Array;
  attention_rollout(): Float32Array;
  attention_rollout_view(): Float32Array;
  cache_attention(): Float32Array;
  cache_attention_view(): Float32Array;
  cache_keys(): Float32Array;
  cache_keys_view(): Float32Array;
  cache_values(): Float32Array;
  cache_values_view(): Float32Array;
  step_params(): Float32Array;
  step_params_view(): Float32Array;
  batch_ids(): Int32Array;
  batch_ids_view(): Int32Array;
  batch_targets(): Int32Array;
  batch_targets_view(): Int32Array;
  step_grads(): Float32Array;
  step_grads_view(): Float32Array;
  step_share_grads(): Float32Array;
  step_share_grads_view(): Float32Array;
  step_losses(): Float32Array;
  step_losses_view(): Float32Array;
  shard_grads(): Float32Array;
  shard_grads_view(): Float32Array;
  shard_losses(): Float32Array;
  shard_losses_view(): Float32Array;
  eval_ids(): Int32Array;
  eval_ids_view(): Int32Array;
  eval_targets(): Int32Array;
  eval_targets_view(): Int32Array;
  // the staging areas: n values as a view of the heap to write into, then a *_staged call
  stage_floats(n: number): Float32Array;
  stage_losses(n: number): Float32Array;
  stage_ids(n: number): Int32Array;
  stage_targets(n: number): Int32Array;
  // </generated>
  /** A view of the opening's slice buffer (null when there is none). */
  open_view(offset: number, length: number): Uint8Array | null;
  /** Why the last save() returned null. */
  last_error(): string;
  /** One `gpt api` call line → its answer, as `gpt api` gives it (src/api/gpt_calls.h); calls that name files are refused. */
  call_json(line: string): string;
  delete(): void;
  isDeleted(): boolean;
}

/** The raw module: the table's module calls as gpt_<name>, and the module's own few. */
export interface GptCoreModule {
  GptSession: new () => GptSessionHandle;
  // <generated GptCoreModule> by scripts/gen-gpt-api.mjs from the calls' table (src/api/gpt_calls.h): do not edit
  /** the built-in tasks → `{"tasks":[{"name","description","example","attention","alphabet","loss_floor"}]}` */
  gpt_tasks(): string;
  /** the kernel tier for every run → `{"kernels"}`: the tier now in use (`"reference"` or the fast tier's name) */
  gpt_kernels(tier: string | Uint8Array): string;
  /** the bytes `create` of this spec would take and the core's limit → `{"bytes","limit"}` (no session needed); past the limit, `create`'s error */
  gpt_memory(spec: string): string;
  /** this table (`src/api/gpt_calls.h`): `{"calls":[{"name","role","args":[{"key","kind","file"?}],"results","api","example"?,"doc","full"?,"returns"?}],"results":[{"name","type"}],"stages":[{"name","type"}]}` — every call with its role (`run`, `predict`, `open`, `shards`, `module`), its arguments in the wasm method's order and their kinds, the typed arrays it leaves, whether `gpt api` takes it, and whether it is in the [full module](#the-full-module) only (`full`); `web/gpt.js` builds its methods from it */
  gpt_calls(): string;
  // </generated>
  /** Bytes malloc'd now (for leak tests). */
  heap_bytes_in_use(): number;
  /** Memory for opening a model: what is left and the most there can be. */
  open_memory(): { left: number; max: number };
  /** Whether this module has the opening and the walk (gpt_core_full, gpt_core_mt; not gpt_core). */
  full_loaded(): boolean;
}

/**
 * Options for {@link loadGpt}: loadAttention's, for web/gen/gpt_core.wasm, and threads (1 … 16,
 * default 1): above 1 loads the threaded module instead (web/gen/gpt_core_mt.*: a cross-origin
 * isolated page only, else GptError field "threads"), with threads − 1 workers started beside it.
 */
export type LoadGptOptions = import('./attention.js').LoadOptions & { threads?: number };

/** Loads the GPT's wasm module (web/gen/gpt_core.mjs, or gpt_core_mt.mjs with threads) and returns the API. Call once and keep the result. */
export function loadGpt(options?: LoadGptOptions): Promise<Gpt>;

/** SharedArrayBuffer and Atomics.wait work here (a cross-origin isolated page or worker): loadGpt({threads}) may ask for more than 1. */
export function threadsAvailable(): boolean;

/** The table's rows whose methods gpt.js writes by hand; every other gpt api row is a method made from the table. */
export const HAND_WRITTEN: ReadonlySet<string>;
/** A row's name as its method's: run_memory → runMemory. */
export function camelName(name: string): string;
/** The methods made from the table's rows (GptRun's, or Gpt's for role "module"). */
export function derivedMethods(calls: GptCallRow[]): { method: string; row: GptCallRow; what: string }[];

/** Thrown for every input the core refuses, with what is at fault. */
export class GptError extends Error {
  constructor(message: string, where?: { field?: string });
  name: 'GptError';
  /** A spec key ("n_head", "lr", …), "text", "prompt", "checkpoint", a tensor's or metadata key's name, "run", or "". */
  field: string;
}
