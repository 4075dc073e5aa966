# gpt_cli_test.cmake — runs the `gpt` CLI as a user would and checks exit codes, output and files.
# ctest runs one part per test, so they run in parallel and fail separately:
#   cmake -DGPT=<gpt> -DATTENTION=<attention> -DJSON_CLOSE=<json_close> -DWORK=<dir> -DPART=<part>
#         -P tests/gpt_cli_test.cmake
# Parts: usage (options, bad numbers, bad text files); train (a run, its CSV log, inspect, eval,
# sample, logits, attention and its head spec traced by `attention`, damaged files, divergence);
# resume (bit for bit); text (a run on the user's text); interrupt (Ctrl-C saves); api (a scripted
# `gpt api` session, and resume through it); finetune (`gpt finetune` of a model file: the run it
# writes samples and resumes, the same seed the same file, refusals; and through `gpt api`);
# interp (`gpt interp`: its --json answers are `gpt api`'s, word for word; its tables; refusals);
# foreign (nanoGPT's ckpt.pt and meta.pkl written by Node, tests/lib/write-foreign.mjs: every
# command takes the meta.pkl after the checkpoint, a meta.pkl found is named, a model without one
# is told what to give, a text named .pt is called what it is not, and `gpt api` scores an opened
# model's surprisal as a float64 nanoGPT does; needs -DNODE=<node> -DSRC=<source dir>).
# Models are tiny (1 layer, n_embd 16, block 16, batches of 4) so every part takes seconds, also
# under ASan in a Debug build.

set(tmp ${WORK}/gpt_cli_${PART})
file(REMOVE_RECURSE ${tmp})
file(MAKE_DIRECTORY ${tmp})

# Runs a command in ${tmp}; checks its exit status and that stdout+stderr match a regex.
# Leaves stdout in `out` and stderr in `err` for the caller.
function(expect_run name expected_rc expected_regex)
  execute_process(COMMAND ${ARGN} WORKING_DIRECTORY ${tmp} RESULT_VARIABLE rc OUTPUT_VARIABLE o ERROR_VARIABLE e)
  if(NOT rc STREQUAL expected_rc)
    message(FATAL_ERROR "${name}: exit ${rc}, expected ${expected_rc}\nstdout: ${o}\nstderr: ${e}")
  endif()
  if(NOT "${o}${e}" MATCHES "${expected_regex}")
    message(FATAL_ERROR "${name}: output does not match '${expected_regex}'\nstdout: ${o}\nstderr: ${e}")
  endif()
  set(out "${o}" PARENT_SCOPE)
  set(err "${e}" PARENT_SCOPE)
  message(STATUS "ok: ${name}")
endfunction()

# expect_equal(name a b): two strings (file hashes, answers) are equal.
function(expect_equal name a b)
  if(NOT "${a}" STREQUAL "${b}")
    message(FATAL_ERROR "${name}: expected equal:\n${a}\n${b}")
  endif()
  message(STATUS "ok: ${name}")
endfunction()

# `gpt api` with the calls in `lines` (a list of JSON texts) on stdin; the answers, one per line,
# become answer_0, answer_1, … in the caller's scope.
function(run_api name)
  set(input "")
  foreach(line IN LISTS ARGN)
    string(APPEND input "${line}\n")
  endforeach()
  file(WRITE ${tmp}/${name}.jsonl "${input}")
  execute_process(COMMAND ${GPT} api WORKING_DIRECTORY ${tmp} INPUT_FILE ${tmp}/${name}.jsonl
                  RESULT_VARIABLE rc OUTPUT_VARIABLE o ERROR_VARIABLE e)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${name}: gpt api exited ${rc}\nstdout: ${o}\nstderr: ${e}")
  endif()
  # Split on newlines by hand: JSON's brackets would confuse CMake's list splitting.
  set(i 0)
  while(NOT o STREQUAL "")
    string(FIND "${o}" "\n" nl)
    if(nl EQUAL -1)
      message(FATAL_ERROR "${name}: answer ${i} does not end with a newline: ${o}")
    endif()
    string(SUBSTRING "${o}" 0 ${nl} line)
    math(EXPR next "${nl} + 1")
    string(SUBSTRING "${o}" ${next} -1 o)
    set(answer_${i} "${line}" PARENT_SCOPE)
    math(EXPR i "${i} + 1")
  endwhile()
  list(LENGTH ARGN n_calls)
  if(NOT i EQUAL n_calls)
    message(FATAL_ERROR "${name}: ${n_calls} calls but ${i} answers")
  endif()
endfunction()

function(expect_answer name text regex)
  if(NOT "${text}" MATCHES "${regex}")
    message(FATAL_ERROR "${name}: answer does not match '${regex}':\n${text}")
  endif()
  message(STATUS "ok: ${name}")
endfunction()

set(SHAPE --n-layer 1 --n-embd 16 --n-head 2 --block-size 16 --batch-size 4)
set(MODEL ${SHAPE} --n-chars 2000)

# Overwrites bytes of a file in place (a damaged checkpoint): printf's octal escapes, at an offset.
function(damage file offset octal_bytes)
  execute_process(COMMAND sh -c "printf '${octal_bytes}' | dd of='${file}' bs=1 seek=${offset} conv=notrunc 2>/dev/null"
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "could not damage ${file}")
  endif()
endfunction()

# The CSV log's column `col` (0-based) of rows `from`…`to` (data rows, after the header), joined by ','.
function(csv_column file col from to result)
  file(STRINGS ${file} rows)
  set(values "")
  foreach(i RANGE ${from} ${to})
    list(GET rows ${i} row)  # row i: the header is row 0, so data row i-1
    string(REPLACE "," ";" cells "${row}")
    list(GET cells ${col} cell)
    string(APPEND values "${cell},")
  endforeach()
  set(${result} "${values}" PARENT_SCOPE)
endfunction()
set(SPEC "\"task\":\"copy\",\"n_chars\":2000,\"n_layer\":1,\"n_embd\":16,\"n_head\":2,\"block_size\":16,\"batch_size\":4")

# ==================================================================== usage and bad input
if(PART STREQUAL "usage")
  expect_run("no command" 2 "A subcommand is required.*Usage: gpt" ${GPT})
  expect_run("unknown command" 2 "frobnicate" ${GPT} frobnicate)
  expect_run("help" 0 "train.*resume.*sample.*eval.*inspect.*attention.*logits.*api" ${GPT} --help)
  expect_run("train help mentions Ctrl-C" 0 "Ctrl-C saves a checkpoint of the last completed step" ${GPT} train --help)
  expect_run("train needs -o" 2 "--output is required.*Usage: gpt train" ${GPT} train --steps 5)
  expect_run("not a number" 2 "Could not convert: --steps = abc" ${GPT} train -o x.safetensors --steps abc)
  expect_run("task and text" 2 "excludes" ${GPT} train -o x.safetensors --task copy --text t.txt)
  expect_run("bad --kernels" 2 "kernels" ${GPT} --kernels turbo tasks)
  expect_run("bad --head" 2 "--head is LAYER.HEAD" ${GPT} attention m.safetensors --prompt a --head 1-2)

  expect_run("tasks" 0 "copy +\"cabej=cabej\" +loss floor [0-9.]+.*reverse.*sort.*induction.*sums.*grammar" ${GPT} tasks)
  expect_run("tasks --json" 0 "^\\{\"ok\":true,\"tasks\":\\[\\{\"name\":\"copy\",\"description\"" ${GPT} tasks --json)

  # Bad numbers get the core's message, after the option that set them; nothing is written.
  expect_run("negative lr" 1 "gpt: --lr: lr must be between 1e-9 and 10, got -1" ${GPT} train -o x.safetensors --lr -1)
  expect_run("n_head must divide n_embd" 1
             "--n-head: n_embd is 64, which 3 heads cannot share equally \\(n_head must divide n_embd\\)"
             ${GPT} train -o x.safetensors --n-head 3)
  expect_run("zero steps" 1 "--steps: steps must be between 1 and" ${GPT} train -o x.safetensors --steps 0)
  expect_run("oversize n_embd" 1 "--n-embd: n_embd must be between 1 and 1024, got 4096" ${GPT} train -o x.safetensors --n-embd 4096)
  expect_run("warm-up longer than the run" 1 "--warmup-steps: warmup_steps is 50: it must be between 0 and 10"
             ${GPT} train -o x.safetensors --steps 10 --warmup-steps 50)
  expect_run("min_lr above lr" 1 "--min-lr: min_lr is 0.5" ${GPT} train -o x.safetensors --lr 0.1 --min-lr 0.5)
  expect_run("unknown task" 1 "--task: task must be one of \"copy\", \"reverse\", \"sort\", \"induction\", \"sums\", \"grammar\", got \"frob\""
             ${GPT} train -o x.safetensors --task frob)
  expect_run("unknown preset" 1 "--preset: preset must be one of \"tiny\", \"small\", got \"huge\"" ${GPT} train -o x.safetensors --preset huge)
  expect_run("unknown mask" 1 "--mask: mask must be one of" ${GPT} train -o x.safetensors --mask diagonal)
  file(WRITE ${tmp}/t.txt "a text long enough for block_size 16, twice: a text long enough for block_size 16\n")
  expect_run("n_chars with a text" 1 "--n-chars: \"n_chars\" is the length of a task's text; it does not apply to \"text\"" ${GPT} train -o x.safetensors --text t.txt --n-chars 500)
  expect_run("negative checkpoint interval" 1 "checkpoint_interval is -1" ${GPT} train -o x.safetensors --checkpoint-interval -1)
  expect_run("output folder missing" 1 "cannot write the checkpoint no_dir/x.safetensors: the folder no_dir does not exist"
             ${GPT} train -o no_dir/x.safetensors ${MODEL} --steps 2)

  # Text files: missing, empty, too short, invalid UTF-8 (the byte offset), one that is a folder.
  string(ASCII 195 40 bad_pair)  # 0xC3 then '(' : a 2-byte lead without its continuation byte
  file(WRITE ${tmp}/bad.txt "hello world ${bad_pair} and more")
  file(WRITE ${tmp}/empty.txt "")
  file(WRITE ${tmp}/short.txt "abc")
  expect_run("missing text file" 1 "cannot read the text file no_such.txt: No such file" ${GPT} train -o x.safetensors --text no_such.txt)
  expect_run("text file is a folder" 1 "cannot read the text file \\.: it is a directory" ${GPT} train -o x.safetensors --text .)
  expect_run("empty text" 1 "gpt: empty.txt: the text is empty" ${GPT} train -o x.safetensors --text empty.txt)
  expect_run("short text" 1 "gpt: short.txt: the text has 3 characters; a block_size of 64 needs at least 65"
             ${GPT} train -o x.safetensors --text short.txt)
  expect_run("invalid UTF-8" 1 "gpt: bad.txt: invalid UTF-8 at byte 12 of the text.*0xC3 followed by 0x28"
             ${GPT} train -o x.safetensors --text bad.txt)
  file(GLOB written ${tmp}/*.safetensors)
  expect_equal("bad input writes nothing" "${written}" "")
endif()

# ==================================================================== a run and its checkpoint
if(PART STREQUAL "train")
  expect_run("train" 0
    "step +0/20 +val_loss [0-9.]+ .*step +1/20 +loss [0-9.]+ +lr [0-9.e-]+ +grad_norm [0-9.]+ .*tokens/s .*step 10/20 +loss [0-9.]+ +val_loss [0-9.]+.*step 20/20 +loss [0-9.]+ +val_loss [0-9.]+.*saved a.safetensors \\(step 20, val_loss [0-9.]+\\)"
    ${GPT} train -o a.safetensors ${MODEL} --steps 20 --eval-interval 10 --log a.csv)
  string(FIND "${out}" "\r" cr)
  string(ASCII 27 escape)
  string(FIND "${out}" "${escape}[" esc)
  expect_equal("no progress bar when stdout is not a terminal" "${cr}${esc}" "-1-1")
  expect_answer("the header says what runs" "${out}" "1 layer, 2 heads of 8, n_embd 16, block_size 16, vocab 12 \\(3,760 parameters\\) on the copy task")

  # The CSV log: a header, row 0 (the initial validation loss), then one row per step.
  file(STRINGS ${tmp}/a.csv rows)
  list(LENGTH rows n_rows)
  expect_equal("log rows" "${n_rows}" "22")
  list(GET rows 0 header)
  expect_equal("log header" "${header}" "step,loss,val_loss,lr,grad_norm,tokens_per_s,elapsed_s")
  list(GET rows 1 row0)
  expect_answer("log row 0" "${row0}" "^0,,[0-9.]+,,,,[0-9.]+$")
  foreach(step RANGE 1 20)
    math(EXPR i "${step} + 1")
    list(GET rows ${i} row)
    if(step EQUAL 10 OR step EQUAL 20)
      set(val "[0-9.]+")
    else()
      set(val "")
    endif()
    if(NOT row MATCHES "^${step},[0-9.]+,${val},[0-9.e-]+,[0-9.e-]+,[0-9]+,[0-9.]+$")
      message(FATAL_ERROR "log row ${step}: ${row}")
    endif()
  endforeach()
  message(STATUS "ok: log rows 1-20")

  expect_run("inspect" 0
    "model +1 layer, 2 heads of 8, n_embd 16, block_size 16, vocab 12; mask strict, softmax stable.*parameters +3,760.*data +the copy task \\(2,000 characters\\).*vocab +12 characters: \"\\\\n=abcdefghij\".*step +20 of 20; last val_loss measured [0-9.]+.*tensors +49.*transformer.wte.weight +F32 +\\[12, 16\\].*transformer.h.0.attn.c_attn.weight +F32 +\\[48, 16\\].*lm_head.weight +F32 +\\[12, 16\\].*optimizer.exp_avg.transformer.wte.weight +F32 +\\[12, 16\\].*optimizer.exp_avg_sq.transformer.ln_f.bias +F32 +\\[16\\]"
    ${GPT} inspect a.safetensors)
  expect_run("inspect --json" 0 "^\\{\"ok\":true,\"file\":\"a.safetensors\"" ${GPT} inspect a.safetensors --json)
  string(JSON n_tensors LENGTH "${out}" tensors)
  string(JSON c_attn GET "${out}" tensors 4 shape)
  string(JSON step GET "${out}" step)
  string(JSON saved_val GET "${out}" val_loss)
  expect_equal("inspect --json tensors" "${n_tensors} ${step} ${c_attn}" "49 20 [ 48, 16 ]")

  expect_run("eval" 0 "^val_loss [0-9.]+ at step 20 over 199 validation tokens of the copy task \\(2,000 characters\\); the task's loss floor is [0-9.]+" ${GPT} eval a.safetensors)
  expect_run("eval --json" 0 "^\\{\"ok\":true,\"step\":20,\"val_loss\":[0-9.]+\\}" ${GPT} eval a.safetensors --json)
  string(JSON val GET "${out}" val_loss)
  expect_equal("eval gives the validation loss the run saved" "${val}" "${saved_val}")
  # the loss by position: at block_size, and past it refused for learned positions (naming wpe)
  expect_run("eval --context 16" 0 "^loss by position at context 16 \\(trained at 16\\).*\n15 [0-9.]+\nKV cache: 2,048 bytes \\(2 key/value heads of 2\\)" ${GPT} eval a.safetensors --context 16)
  expect_run("eval --context past wpe" 1 "gpt: --context: learned positions have a row of wpe for each of the 16 positions" ${GPT} eval a.safetensors --context 32)
  # Every run-spec option reaches the checkpoint's config and training settings under its key.
  expect_run("train with the variants' options" 0 "^$"
    ${GPT} train -o v.safetensors ${SHAPE} --task sort --n-chars 2000 --steps 2 --quiet --pos rope --rope-base 5000
    --rope-dims 4 --rope interleaved --rope-scaling 8,1,4,16 --mask inclusive --softmax naive --n-kv-head 1
    --norm rmsnorm --mlp swiglu --n-inner 24 --window 4 --sink 1 --head-size 8 --bias false --tie-embeddings false
    --qkv-bias true --qk-norm true --lr 0.003 --min-lr 0.0002 --warmup-steps 1 --weight-decay 0.02 --grad-clip 0.5
    --eval-interval 2 --eval-batches 3 --seed 7)
  expect_run("inspect the variants' run" 0 "^\\{\"ok\":true" ${GPT} inspect v.safetensors --json)
  expect_answer("the variants' options are in the config" "${out}"
    "\"config\":\\{\"vocab_size\":12,\"block_size\":16,\"n_layer\":1,\"n_head\":2,\"n_embd\":16,\"mask\":\"inclusive\",\"softmax\":\"naive\",\"bias\":false,\"pos\":\"rope\",\"rope_base\":5000,\"rope_dims\":4,\"rope\":\"interleaved\",\"n_kv_head\":1,\"norm\":\"rmsnorm\",\"mlp\":\"swiglu\",\"n_inner\":24,\"window\":4,\"sink\":1,\"head_size\":8,\"tie_embeddings\":false,\"qkv_bias\":true,\"qk_norm\":true,\"rope_scaling\":\\{\"rope_type\":\"llama3\",\"factor\":8,\"low_freq_factor\":1,\"high_freq_factor\":4,\"original_max_position_embeddings\":16\\}\\}")
  expect_answer("the optimiser's options are in the run" "${out}"
    "\"data\":\\{\"task\":\"sort\",\"n_chars\":2000[^}]*\\}.*\"train\":\\{\"batch_size\":4,\"steps\":2,\"lr\":0.003,\"min_lr\":0.0002,\"warmup_steps\":1,\"weight_decay\":0.02,\"beta1\":0.9,\"beta2\":0.99,\"grad_clip\":0.5,\"eval_interval\":2,\"eval_batches\":3\\},\"seed\":\"7\"")
  expect_run("train --sink without a window" 1 "sink is given but there is no window" ${GPT} train -o nosink.safetensors --task copy --n-chars 2000 --sink 2 --steps 1 --quiet)

  expect_run("sample greedy" 0 "^abc=[=a-j\n]+$" ${GPT} sample a.safetensors --prompt "abc=" --greedy -n 12)
  set(first "${out}")
  expect_run("sample greedy again" 0 "^abc=" ${GPT} sample a.safetensors --prompt "abc=" --greedy -n 12)
  expect_equal("greedy sampling is deterministic" "${out}" "${first}")
  expect_run("sample seeded" 0 "^abc=" ${GPT} sample a.safetensors --prompt "abc=" -n 30 --temperature 0.8 --top-k 5 --seed 9)
  set(first "${out}")
  expect_run("sample seeded again" 0 "^abc=" ${GPT} sample a.safetensors --prompt "abc=" -n 30 --temperature 0.8 --top-k 5 --seed 9)
  expect_equal("the same seed gives the same text" "${out}" "${first}")
  expect_run("sample --top-p 1 draws what no --top-p draws" 0 "^abc=" ${GPT} sample a.safetensors --prompt "abc=" -n 30 --temperature 0.8 --top-k 5 --top-p 1 --seed 9)
  expect_equal("top-p 1 keeps every token" "${out}" "${first}")
  expect_run("sample top-p seeded" 0 "^abc=" ${GPT} sample a.safetensors --prompt "abc=" -n 30 --temperature 1.5 --top-p 0.7 --seed 9)
  set(top_p_text "${out}")
  expect_run("sample top-p seeded again" 0 "^abc=" ${GPT} sample a.safetensors --prompt "abc=" -n 30 --temperature 1.5 --top-p 0.7 --seed 9)
  expect_equal("the same seed gives the same top-p text" "${out}" "${top_p_text}")
  expect_run("sample greedy, 30" 0 "^abc=" ${GPT} sample a.safetensors --prompt "abc=" -n 30 --greedy)
  set(greedy30 "${out}")
  expect_run("sample top-p near 0" 0 "^abc=" ${GPT} sample a.safetensors --prompt "abc=" -n 30 --temperature 1.5 --top-p 1e-9 --seed 9)
  expect_equal("top-p near 0 keeps the most likely token alone: the greedy text" "${out}" "${greedy30}")
  expect_run("sample top-p --json" 0 "^\\{\"ok\":true" ${GPT} sample a.safetensors --prompt "abc=" -n 30 --temperature 1.5 --top-p 0.7 --seed 9 --json)
  string(JSON top_p_json GET "${out}" text)
  expect_equal("--json gives the text the stream gives" "${top_p_json}\n" "${top_p_text}")
  expect_run("sample past block_size (the context is cropped)" 0 "^abc=" ${GPT} sample a.safetensors --prompt "abc=" -n 40 --greedy)
  expect_run("sample --json" 0 "^\\{\"ok\":true,\"text\":\"abc=[^\"]*\",\"new_text\":\"[^\"]*\",\"tokens\":\\[\"a\",\"b\",\"c\",\"=\"" ${GPT} sample a.safetensors --prompt "abc=" -n 5 --json)
  string(JSON n_tokens LENGTH "${out}" tokens)
  expect_equal("sample --json tokens" "${n_tokens}" "9")
  expect_run("prompt with an unknown character" 1
    "gpt: --prompt: \"Z\" \\(U\\+005A\\) at character 2 \\(byte 2, both counting from 0\\) of the prompt is not in the vocabulary of 12 characters"
    ${GPT} sample a.safetensors --prompt "abZ")
  # (through sh: CMake drops an empty argument)
  expect_run("empty prompt" 1 "gpt: --prompt: the prompt is empty" sh -c "'${GPT}' sample a.safetensors --prompt ''")
  expect_run("temperature 0" 1 "gpt: --temperature: temperature is 0: it must be above 0" ${GPT} sample a.safetensors --prompt a --temperature 0)
  expect_run("top-k above the vocabulary" 1 "gpt: --top-k: top_k is 13: it must be between 0 and 12" ${GPT} sample a.safetensors --prompt a --top-k 13)
  expect_run("top-p 0" 1 "gpt: --top-p: top_p is 0: it must be above 0 and at most 1" ${GPT} sample a.safetensors --prompt a --top-p 0)
  expect_run("top-p above 1" 1 "gpt: --top-p: top_p is 1.5: it must be above 0 and at most 1" ${GPT} sample a.safetensors --prompt a --top-p 1.5)
  expect_run("negative max-new-tokens" 1 "max_new_tokens is -1" ${GPT} sample a.safetensors --prompt a -n -1)

  expect_run("logits" 0 "^\\{\"ok\":true,\"tokens\":\\[\"a\",\"b\",\"c\"\\],\"logits\":\\[\\[" ${GPT} logits a.safetensors --prompt abc)
  string(JSON rows LENGTH "${out}" logits)
  string(JSON cols LENGTH "${out}" logits 2)
  expect_equal("logits shape" "${rows}x${cols}" "3x12")
  expect_run("logits: prompt longer than block_size" 1 "the prompt has 17 characters; the model sees at most block_size = 16"
             ${GPT} logits a.safetensors --prompt "abcdefghijabcdefg")

  # Attention maps, and each head's stepper spec, which `attention trace` turns back into the
  # same weights (reference kernels on both sides: equal to float rounding, in fact bit for bit).
  expect_run("attention maps" 0 "^\\{\"ok\":true,\"tokens\":\\[\"c\",\"a\",\"b\",\"=\",\"c\",\"a\",\"b\"\\],\"T\":7,\"n_layer\":1,\"n_head\":2,\"maps\":\\[\\[\\[\\[1,0,0,0,0,0,0\\],"
             ${GPT} attention a.safetensors --prompt "cab=cab")
  file(WRITE ${tmp}/maps.json "${out}")
  foreach(head 0 1)
    math(EXPR head1 "${head} + 1")
    expect_run("attention --head 1.${head1}" 0 "^\\{\"Q\":\\[\\[.*\"K\":.*\"V\":.*\"n_head\":1,\"causal\":true,\"mask\":\"strict\",\"softmax\":\"stable\"\\}\n$"
               ${GPT} attention a.safetensors --prompt "cab=cab" --head 1.${head1})
    file(WRITE ${tmp}/head_${head}.json "${out}")
    expect_run("attention trace of head 0.${head}" 0 "^\\{\"ok\":true,\"trace\":\\{\"mode\":\"qkv\",\"T\":7" ${ATTENTION} trace head_${head}.json)
    file(WRITE ${tmp}/trace_${head}.json "${out}")
    expect_run("head 0.${head}: traced weights = the model's" 0 "max" ${JSON_CLOSE} ${tmp}/trace_${head}.json trace.heads.0.weights ${tmp}/maps.json maps.0.${head} 1e-6)
    message(STATUS "   ${out}")
  endforeach()
  expect_run("--head: no such layer" 1 "gpt: --head: layer 2 does not exist: the model has layers 1 to 1 \\(counting from 1\\)" ${GPT} attention a.safetensors --prompt ab --head 2.1)
  expect_run("--head: no such head" 1 "gpt: --head: head 3 does not exist: each layer has heads 1 to 2 \\(counting from 1\\)" ${GPT} attention a.safetensors --prompt ab --head 1.3)
  expect_run("--head: layer 0" 1 "gpt: --head: layer 0 does not exist" ${GPT} attention a.safetensors --prompt ab --head 0.1)

  # Files that are missing, truncated or damaged: the message names the byte or the tensor, and
  # nothing is overwritten.
  foreach(cmd "sample;--prompt;a" "eval" "inspect" "logits;--prompt;a" "attention;--prompt;a" "resume")
    list(POP_FRONT cmd name)
    expect_run("${name}: missing file" 1 "gpt: cannot open no_such.safetensors: No such file" ${GPT} ${name} no_such.safetensors ${cmd})
  endforeach()
  file(WRITE ${tmp}/not_a_checkpoint.safetensors "hello")
  expect_run("not a checkpoint" 1 "gpt: not_a_checkpoint.safetensors is neither a PyTorch zip \\(ckpt.pt\\) nor a safetensors file: the file is 5 bytes: it ends at byte 5, inside the 8-byte header length" ${GPT} inspect not_a_checkpoint.safetensors)
  execute_process(COMMAND sh -c "head -c 3000 a.safetensors > truncated.safetensors" WORKING_DIRECTORY ${tmp})
  expect_run("truncated file" 1 "gpt: truncated.safetensors: the header length \\(bytes 0 to 7\\) says the JSON header takes bytes 8 to [0-9]+, but the file ends at byte 3000"
             ${GPT} sample truncated.safetensors --prompt a)
  file(SIZE ${tmp}/a.safetensors size)
  file(COPY_FILE ${tmp}/a.safetensors ${tmp}/nan.safetensors)
  math(EXPR at "${size} - 8")
  damage(${tmp}/nan.safetensors ${at} "\\377\\377\\377\\177")
  expect_run("a NaN in a tensor" 1 "gpt: nan.safetensors: tensor \"optimizer.exp_avg_sq.transformer.ln_f.bias\" holds nan at element \\[14\\]"
             ${GPT} eval nan.safetensors)
  file(COPY_FILE ${tmp}/a.safetensors ${tmp}/header.safetensors)
  damage(${tmp}/header.safetensors 12 "\\000")
  file(SHA256 ${tmp}/header.safetensors before)
  expect_run("a damaged header" 1 "gpt: header.safetensors: .*byte" ${GPT} resume header.safetensors --steps 30)
  file(SHA256 ${tmp}/header.safetensors after)
  expect_equal("a damaged file is not overwritten" "${after}" "${before}")

  # Resume refuses what it cannot do.
  expect_run("resume a complete run" 1 "the run in a.safetensors is complete \\(step 20 of 20\\): give --steps with a new total" ${GPT} resume a.safetensors)
  expect_run("resume to fewer steps" 1 "--steps: --steps is the run's new total, and a.safetensors is already at step 20: give more than 20" ${GPT} resume a.safetensors --steps 10)
  expect_run("resume a task run with a text" 1 "a.safetensors was trained on the copy task, which it regenerates: --text does not apply" ${GPT} resume a.safetensors --steps 30 --text maps.json)

  # Divergence (exercise 3: the naive softmax at a learning rate of 10): exit 3, the core's
  # message naming the step, and the checkpoint from before stays byte for byte.
  file(SHA256 ${tmp}/a.safetensors before)
  expect_run("divergence" 3 "gpt: the loss became [-a-z]+ at step [0-9]+, so training stopped there.*naive softmax.*Nothing was written: a.safetensors is as it was before this run"
             ${GPT} train -o a.safetensors ${MODEL} --softmax naive --lr 10 --steps 200 -q)
  file(SHA256 ${tmp}/a.safetensors after)
  expect_equal("divergence leaves the checkpoint as it was" "${after}" "${before}")
  # With a checkpoint every step, the file holds the last good step, which the message names.
  expect_run("divergence with checkpoints" 3 "weights are those after step ([0-9]+)\\)\\..*gpt: step [0-9]+ is the log's last row\\. Nothing more was written: d.safetensors holds step ([0-9]+)"
             ${GPT} train -o d.safetensors ${MODEL} --softmax naive --lr 1 --steps 200 --checkpoint-interval 1 -q --log d.csv)
  string(REGEX MATCH "holds step ([0-9]+)" _ "${err}")
  set(good ${CMAKE_MATCH_1})
  string(REGEX MATCH "weights are those after step ([0-9]+)" _ "${err}")
  expect_equal("the last good step is saved" "${good}" "${CMAKE_MATCH_1}")
  expect_run("inspect after divergence" 0 "step +${good} of 200" ${GPT} inspect d.safetensors)
  file(STRINGS ${tmp}/d.csv rows)
  list(GET rows -1 last)
  math(EXPR bad "${good} + 1")
  expect_answer("the log's last row is the diverged step" "${last}" "^${bad},[-a-z]+,")
endif()

# ==================================================================== resume, bit for bit
if(PART STREQUAL "resume")
  # A constant learning rate (min_lr = lr, no warm-up), so that the schedule does not depend on the
  # run's total: 10 steps, then resume to 20, must give the checkpoint of 20 steps in one go.
  set(LR --lr 0.003 --min-lr 0.003 --warmup-steps 0 --eval-interval 5)
  expect_run("train 20 steps" 0 "saved one_go.safetensors \\(step 20" ${GPT} train -o one_go.safetensors ${MODEL} ${LR} --steps 20 --log one_go.csv)
  expect_run("train 10 steps" 0 "saved split.safetensors \\(step 10" ${GPT} train -o split.safetensors ${MODEL} ${LR} --steps 10 --log split.csv)
  expect_run("resume to 20" 0 "resuming a GPT.*steps 10 → 20.*step 11/20.*saved split.safetensors \\(step 20"
             ${GPT} resume split.safetensors --steps 20 --log split.csv)
  file(SHA256 ${tmp}/one_go.safetensors a)
  file(SHA256 ${tmp}/split.safetensors b)
  expect_equal("10 + resume 10 = 20 in one go: the same checkpoint bytes" "${b}" "${a}")
  csv_column(${tmp}/one_go.csv 1 2 21 a)
  csv_column(${tmp}/split.csv 1 2 21 b)
  expect_equal("… and the same 20 losses in the logs" "${b}" "${a}")
  csv_column(${tmp}/split.csv 0 1 21 steps)
  expect_equal("the appended log goes on from step 11" "${steps}" "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,")

  # Resume with -o writes elsewhere and leaves the original.
  file(SHA256 ${tmp}/split.safetensors before)
  expect_run("resume -o" 0 "saved longer.safetensors \\(step 25" ${GPT} resume split.safetensors --steps 25 -o longer.safetensors)
  file(SHA256 ${tmp}/split.safetensors after)
  expect_equal("resume -o leaves the original" "${after}" "${before}")
  expect_run("inspect the longer run" 0 "step +25 of 25" ${GPT} inspect longer.safetensors)

  # Threads: --threads 1 is the default path of one core; the same count gives the same bytes;
  # a run saved with 2 threads resumes with 1 or 3 (the count is not in the checkpoint).
  expect_run("train with 1 thread" 0 ", 1 thread\n.*saved t1.safetensors \\(step 20" ${GPT} train -o t1.safetensors ${MODEL} ${LR} --steps 20 --threads 1)
  expect_run("train with 2 threads" 0 ", 2 threads\n.*saved t2.safetensors \\(step 20" ${GPT} train -o t2.safetensors ${MODEL} ${LR} --steps 20 --threads 2)
  expect_run("again with 2 threads" 0 "saved t2b.safetensors \\(step 20" ${GPT} train -o t2b.safetensors ${MODEL} ${LR} --steps 20 --threads 2)
  file(SHA256 ${tmp}/t2.safetensors a)
  file(SHA256 ${tmp}/t2b.safetensors b)
  expect_equal("2 threads twice: the same checkpoint bytes" "${b}" "${a}")
  expect_run("train 10 with 2 threads" 0 "saved s2.safetensors \\(step 10" ${GPT} train -o s2.safetensors ${MODEL} ${LR} --steps 10 --threads 2)
  expect_run("resume with 3 threads" 0 "3 threads.*saved s2.safetensors \\(step 20" ${GPT} resume s2.safetensors --steps 20 --threads 3)
  expect_run("bad --threads" 1 "gpt: --threads: threads is -2: it must be between 1 and 64" ${GPT} train -o x.safetensors ${MODEL} --steps 2 --threads -2)
endif()

# ==================================================================== a run on the user's text
if(PART STREQUAL "text")
  set(line "Attention is all you need. 注意力就是你所需要的。\n")
  file(WRITE ${tmp}/t.txt "${line}${line}${line}${line}${line}${line}${line}${line}")
  file(WRITE ${tmp}/other.txt "${line}${line}${line}${line}${line}${line}${line}${line}!")
  expect_run("train on a text" 0 "on the text \"t.txt\".*saved t.safetensors \\(step 5" ${GPT} train -o t.safetensors --text t.txt ${SHAPE} --steps 5)
  expect_run("inspect a text run" 0 "data +the text \"t.txt\" \\(fingerprint [0-9a-f]+\\).*vocab +[0-9]+ characters: \"\\\\n .*注.*\"" ${GPT} inspect t.safetensors)
  expect_run("sample needs no text" 0 "^注意" ${GPT} sample t.safetensors --prompt "注意" -n 8 --seed 2)
  expect_run("a character the text never had" 1 "\"Z\" \\(U\\+005A\\) at character 0 \\(byte 0" ${GPT} sample t.safetensors --prompt "Zoo")
  expect_run("eval needs the text" 1 "gpt: --text: t.safetensors was trained on the text \"t.txt\": give it with --text FILE" ${GPT} eval t.safetensors)
  expect_run("eval with another text" 1 "gpt: other.txt: this is not the text the checkpoint was trained on" ${GPT} eval t.safetensors --text other.txt)
  expect_run("eval with the text" 0 "^val_loss [0-9.]+ at step 5" ${GPT} eval t.safetensors --text t.txt)
  expect_run("resume needs the text" 1 "trained on the text \"t.txt\": give the same text again" ${GPT} resume t.safetensors --steps 8)
  expect_run("resume with the text" 0 "saved t.safetensors \\(step 8" ${GPT} resume t.safetensors --steps 8 --text t.txt)
endif()

# ==================================================================== Ctrl-C
if(PART STREQUAL "interrupt")
  # SIGINT after two seconds of a run that would take hours: the last completed step is saved (step
  # 0 if the signal comes while the run is set up, as it can under ASan), the exit status is 130,
  # and resume continues from it.
  expect_run("Ctrl-C" 130 "gpt: interrupted \\(Ctrl-C\\) after step [0-9]+ of 1000000; saved it to i.safetensors\\. Continue with: gpt resume i.safetensors"
             timeout --preserve-status -s INT 2 ${GPT} train -o i.safetensors ${MODEL} --steps 1000000 --log i.csv -q)
  string(REGEX MATCH "after step ([0-9]+)" _ "${err}")
  set(step ${CMAKE_MATCH_1})
  expect_run("the interrupted run's checkpoint" 0 "step +${step} of 1000000" ${GPT} inspect i.safetensors)
  file(STRINGS ${tmp}/i.csv rows)
  list(GET rows -1 last)
  expect_answer("the log ends at the saved step" "${last}" "^${step},")
  expect_run("resume the interrupted run, interrupted again" 130 "after step [0-9]+ of 1000000"
             timeout --preserve-status -s INT 2 ${GPT} resume i.safetensors -q)
  # The same Ctrl-C delivered twice in a row (as `timeout` does, to the process and to its group)
  # is one Ctrl-C: it still saves.
  string(REPLACE ";" " " model_args "${MODEL}")
  file(WRITE ${tmp}/twice.sh "${GPT} train -o j.safetensors ${model_args} --steps 1000000 -q &\npid=$!\nsleep 1\nkill -INT $pid\nkill -INT $pid\nwait $pid\n")
  expect_run("one Ctrl-C delivered twice" 130 "interrupted \\(Ctrl-C\\) after step [0-9]+ of 1000000; saved it to j.safetensors"
             sh ${tmp}/twice.sh)
  expect_run("the twice-signalled run's checkpoint" 0 "of 1000000" ${GPT} inspect j.safetensors)
endif()

# ==================================================================== gpt api
if(PART STREQUAL "api")
  run_api(session
    "{\"call\":\"tasks\"}"
    "{\"call\":\"info\"}"
    "{\"call\":\"create\",\"spec\":{${SPEC},\"steps\":20,\"seed\":7}}"
    "{\"call\":\"train\",\"n\":3}"
    "{\"call\":\"evaluate\"}"
    "{\"call\":\"sample\",\"spec\":{\"prompt\":\"abc=\",\"max_new_tokens\":5,\"greedy\":true}}"
    "{\"call\":\"generate_start\",\"spec\":{\"prompt\":\"ab\",\"max_new_tokens\":3}}"
    "{\"call\":\"generate_next\"}"
    "{\"call\":\"run_prompt\",\"prompt\":\"abc=abc\"}"
    "{\"call\":\"head_spec\",\"layer\":0,\"head\":1}"
    "{\"call\":\"head_spec\",\"layer\":3,\"head\":1}"
    "{\"call\":\"attention_maps\"}"
    "{\"call\":\"run_prompt\",\"prompt\":\"abZ\"}"
    "{\"call\":\"frobnicate\"}"
    "{\"call\":\"train\"}"
    "{\"call\":\"train\",\"n\":2,\"extra\":1}"
    "not json"
    "{\"call\":\"kernels\",\"tier\":\"turbo\"}"
    "{\"call\":\"create\",\"spec\":{\"n_head\":3}}"
    "{\"call\":\"info\"}"
    "{\"call\":\"next_token\",\"spec\":{\"prompt\":\"abc=\",\"show\":3}}"
    "{\"call\":\"next_token\",\"spec\":{\"top_k\":2,\"top_p\":0.5,\"temperature\":2}}"
    "{\"call\":\"next_token\",\"spec\":{\"top_p\":0}}")
  expect_answer("api tasks" "${answer_0}" "^\\{\"ok\":true,\"tasks\":\\[\\{\"name\":\"copy\"")
  expect_answer("api info before create" "${answer_1}" "^\\{\"ok\":false,\"error\":\"no model yet: create or load one first\",\"field\":\"model\"")
  expect_answer("api create" "${answer_2}" "^\\{\"ok\":true,\"config\":\\{\"vocab_size\":12,\"block_size\":16,\"n_layer\":1,\"n_head\":2,\"n_embd\":16,")
  expect_answer("api create counts parameters" "${answer_2}" "\"n_params\":3760,\"step\":0,\"steps\":20,\"tokens_per_step\":64")
  expect_answer("api train" "${answer_3}" "^\\{\"ok\":true,\"step\":3,\"losses\":\\[[0-9.]+,[0-9.]+,[0-9.]+\\],\"lrs\":\\[")
  expect_answer("api evaluate" "${answer_4}" "^\\{\"ok\":true,\"step\":3,\"val_loss\":[0-9.]+\\}$")
  expect_answer("api sample" "${answer_5}" "^\\{\"ok\":true,\"text\":\"abc=[^\"]*\",\"new_text\":\"[^\"]*\",\"tokens\":\\[\"a\",\"b\",\"c\",\"=\",")
  expect_answer("api generate_start" "${answer_6}" "\"base\":1,\"cache_length\":2,\"rebuilt\":false,\"generated\":0")
  expect_answer("api generate_next" "${answer_7}" "\"base\":2,\"cache_length\":3,\"rebuilt\":false,\"generated\":1")
  expect_answer("api run_prompt" "${answer_8}" "^\\{\"ok\":true,\"tokens\":\\[\"a\",\"b\",\"c\",\"=\",\"a\",\"b\",\"c\"\\],\"T\":7,\"n_layer\":1,\"n_head\":2\\}$")
  expect_answer("api head_spec" "${answer_9}" "^\\{\"ok\":true,\"spec\":\\{\"Q\":\\[\\[.*\"n_head\":1,\"causal\":true,\"mask\":\"strict\",\"softmax\":\"stable\"\\}\\}$")
  expect_answer("api head out of range" "${answer_10}" "\"error\":\"layer 3 does not exist: the model has layers 0 to 0\",\"field\":\"layer\"")
  expect_answer("api attention_maps" "${answer_11}" "^\\{\"ok\":true,\"tokens\":.*\"maps\":\\[\\[\\[\\[1,0,0,0,0,0,0\\]")
  expect_answer("api unknown character" "${answer_12}" "\"Z\\\\\" \\(U\\+005A\\) at character 2 \\(byte 2")
  expect_answer("api unknown call" "${answer_13}" "\"error\":\"unknown call \\\\\"frobnicate\\\\\": the calls are create,.*\"field\":\"call\"")
  expect_answer("api missing argument" "${answer_14}" "\"error\":\"the train call needs \\\\\"n\\\\\"\",\"field\":\"n\"")
  expect_answer("api unknown key" "${answer_15}" "unknown key \\\\\"extra\\\\\" in the train call\",\"field\":\"extra\"")
  expect_answer("api bad JSON" "${answer_16}" "^\\{\"ok\":false,\"error\":\"JSON: unexpected character")
  expect_answer("api bad tier" "${answer_17}" "kernels must be \\\\\"reference\\\\\" or \\\\\"fast\\\\\"")
  expect_answer("api bad spec" "${answer_18}" "n_embd is 64, which 3 heads cannot share equally.*\"field\":\"n_head\"")
  # A refused create leaves the session's model as it was.
  expect_answer("api model survives a bad create" "${answer_19}" "^\\{\"ok\":true,.*\"step\":3,")
  expect_answer("api next_token" "${answer_20}" "^\\{\"ok\":true,\"temperature\":1,\"top_k\":0,\"top_p\":1,\"greedy\":false,\"kept\":12,.*\"top\":\\[\\{\"id\":[0-9]+,\"text\":\"[^\"]*\",\"logit\":[-0-9.e]+,\"p\":[0-9.e-]+,\"p_full\":[0-9.e-]+,\"kept\":true\\},\\{.*\\},\\{[^]]*\\}\\],\"tokens\":\\[\"a\",\"b\",\"c\",\"=\"\\],\"vocab_size\":12\\}$")
  expect_answer("api next_token reshaped" "${answer_21}" "^\\{\"ok\":true,\"temperature\":2,\"top_k\":2,\"top_p\":0.5,\"greedy\":false,\"kept\":[12],")
  expect_answer("api next_token bad top_p" "${answer_22}" "top_p is 0: it must be above 0 and at most 1.*\"field\":\"top_p\"")

  # A head's stepper spec, traced by `attention`, gives the session's attention map for that head.
  string(JSON spec GET "${answer_9}" spec)
  file(WRITE ${tmp}/head_spec.json "${spec}")
  file(WRITE ${tmp}/maps.json "${answer_11}")
  expect_run("attention trace of the head spec" 0 "^\\{\"ok\":true" ${ATTENTION} trace head_spec.json)
  file(WRITE ${tmp}/trace.json "${out}")
  expect_run("traced weights equal the model's" 0 "max" ${JSON_CLOSE} ${tmp}/trace.json trace.heads.0.weights ${tmp}/maps.json maps.0.1 1e-6)
  message(STATUS "   ${out}")

  # The same seed gives the same losses in a new session.
  run_api(again
    "{\"call\":\"create\",\"spec\":{${SPEC},\"steps\":20,\"seed\":7}}"
    "{\"call\":\"train\",\"n\":3}")
  expect_equal("api is deterministic" "${answer_1}" "${answer_3}")
  # Save, load and train on through the api: the losses go on exactly as in an unbroken session
  # (with the cosine schedule of a 20-step run).
  run_api(resume
    "{\"call\":\"create\",\"spec\":{${SPEC},\"steps\":20,\"seed\":5}}"
    "{\"call\":\"train\",\"n\":20}"
    "{\"call\":\"create\",\"spec\":{${SPEC},\"steps\":20,\"seed\":5}}"
    "{\"call\":\"train\",\"n\":10}"
    "{\"call\":\"save\",\"path\":\"s10.safetensors\"}"
    "{\"call\":\"load\",\"path\":\"s10.safetensors\"}"
    "{\"call\":\"train\",\"n\":10}"
    "{\"call\":\"load\",\"path\":\"no_such.safetensors\"}"
    "{\"call\":\"save\",\"path\":\"no_dir/x.safetensors\"}")
  expect_answer("api save" "${answer_4}" "^\\{\"ok\":true,\"bytes\":[0-9]+\\}$")
  expect_answer("api load" "${answer_5}" "^\\{\"ok\":true,.*\"step\":10,\"steps\":20,")
  foreach(i RANGE 0 9)
    math(EXPR j "${i} + 10")
    string(JSON whole GET "${answer_1}" losses ${j})
    string(JSON resumed GET "${answer_6}" losses ${i})
    if(NOT whole STREQUAL resumed)
      message(FATAL_ERROR "api resume: step ${j}: ${resumed}, unbroken ${whole}")
    endif()
  endforeach()
  message(STATUS "ok: api resume gives the unbroken run's losses, bit for bit")
  expect_answer("api load of a missing file" "${answer_7}" "^\\{\"ok\":false,\"error\":\"cannot open no_such.safetensors.*\"field\":\"path\"")
  expect_answer("api save where it cannot" "${answer_8}" "^\\{\"ok\":false,.*no_dir")
  expect_run("the api's checkpoint works with the CLI" 0 "step +10 of 20" ${GPT} inspect s10.safetensors)
endif()

# ==================================================================== interp
if(PART STREQUAL "interp")
  expect_run("interp: a model" 0 "saved m.safetensors" ${GPT} train -o m.safetensors ${MODEL} --steps 10 --eval-interval 10)
  # --json is gpt api's answer of the same call, word for word
  run_api(interp_api
    "{\"call\":\"load\",\"path\":\"m.safetensors\"}"
    "{\"call\":\"lens\",\"spec\":{\"prompt\":\"abc=ab\"}}"
    "{\"call\":\"patch\",\"spec\":{\"clean\":\"abcd=ab\",\"corrupted\":\"abce=ab\",\"token\":\"c\",\"other\":\"d\"}}"
    "{\"call\":\"head_scores\",\"spec\":{}}")
  expect_run("interp lens --json" 0 "^\\{\"ok\":true" ${GPT} interp lens m.safetensors --prompt abc=ab --json)
  expect_equal("interp lens is gpt api's lens" "${out}" "${answer_1}\n")
  expect_run("interp patch --json" 0 "^\\{\"ok\":true" ${GPT} interp patch m.safetensors --prompt abcd=ab --corrupted abce=ab --token c --other d --json)
  expect_equal("interp patch is gpt api's patch" "${out}" "${answer_2}\n")
  expect_run("interp heads --json" 0 "^\\{\"ok\":true" ${GPT} interp heads m.safetensors --json)
  expect_equal("interp heads is gpt api's head_scores" "${out}" "${answer_3}\n")
  # the tables, and refusals naming what is wrong
  expect_run("interp heads table" 0 "induction.*layer 0.*previous token.*layer 0" ${GPT} interp heads m.safetensors)
  expect_run("interp patch table" 0 "Activation patching: logit\\(\"c\"\\) − logit\\(\"d\"\\).*into layer 0 .*into ln_f " ${GPT} interp patch m.safetensors --prompt abcd=ab --corrupted abce=ab --token c --other d)
  expect_run("interp patch of two lengths" 1 "the corrupted prompt has 6 tokens, the clean one 7"
    ${GPT} interp patch m.safetensors --prompt abcd=ab --corrupted abce=a --token c)
  expect_run("interp patch without --corrupted" 2 "patching needs --corrupted" ${GPT} interp patch m.safetensors --prompt abcd=ab --token c)
  expect_run("interp unknown mode" 2 "frobnicate" ${GPT} interp frobnicate m.safetensors)
endif()

if(PART STREQUAL "finetune")
  set(line "the cat sat on the mat. ")
  string(REPEAT "${line}" 40 text)
  file(WRITE ${tmp}/cat.txt "${text}")
  file(WRITE ${tmp}/short.txt "the cat sat.")
  expect_run("a model to fine-tune" 0 "" ${GPT} train -o base.safetensors --text cat.txt ${SHAPE} --steps 2 -q)
  expect_run("finetune" 0 "fine-tuning a GPT of .* on the text \"cat.txt\".*4×8 tokens, lr 0.01.*saved ft.safetensors \\(step 12"
             ${GPT} finetune base.safetensors --text cat.txt -o ft.safetensors --context 8 --steps 12 --lr 0.01 --seed 4)
  expect_run("finetune again, the same seed" 0 "" ${GPT} finetune base.safetensors --text cat.txt -o ft2.safetensors --context 8 --steps 12 --lr 0.01 --seed 4 -q)
  file(SHA256 ${tmp}/ft.safetensors h1)
  file(SHA256 ${tmp}/ft2.safetensors h2)
  expect_equal("the same seed writes the same checkpoint" "${h1}" "${h2}")
  expect_run("the fine-tuned run samples" 0 "^the " ${GPT} sample ft.safetensors --prompt "the " -n 12 --seed 1)
  expect_run("and resumes with its text" 0 "saved ft.safetensors \\(step 16" ${GPT} resume ft.safetensors --text cat.txt --steps 16)
  expect_run("a text too short" 1 "gpt: short.txt: the text \"short.txt\" is 12 tokens long.*at least 2 × \\(8 \\+ 1\\) = 18"
             ${GPT} finetune base.safetensors --text short.txt -o x.safetensors --context 8)
  expect_run("a context past block_size" 1 "context" ${GPT} finetune base.safetensors --text cat.txt -o x.safetensors --context 17)
  expect_run("no model" 1 "no model given" ${GPT} finetune cat.txt --text cat.txt -o x.safetensors)
  run_api(ft_api
    "{\"call\":\"load\",\"path\":\"base.safetensors\"}"
    "{\"call\":\"finetune\",\"spec\":{\"context\":8,\"steps\":12,\"lr\":0.01,\"seed\":4,\"text_name\":\"cat.txt\"},\"text_path\":\"cat.txt\"}"
    "{\"call\":\"train\",\"n\":12}"
    "{\"call\":\"finetune_memory\",\"spec\":{}}")
  expect_answer("api: load a model file to fine-tune" "${answer_0}" "^\\{\"ok\":true,")
  expect_answer("api finetune" "${answer_1}" "^\\{\"ok\":true,.*\"base\":\"this playground's run on the text")
  expect_answer("api train after finetune" "${answer_2}" "^\\{\"ok\":true,\"step\":12,")
  expect_answer("api finetune_memory" "${answer_3}" "^\\{\"ok\":true,\"need\":[0-9]+,\"available\":[0-9]+,\"fits\":true")
endif()

# ==================================================================== foreign
if(PART STREQUAL "foreign")
  execute_process(COMMAND ${NODE} ${SRC}/tests/lib/write-foreign.mjs ${tmp} RESULT_VARIABLE rc ERROR_VARIABLE e)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "write-foreign.mjs: exit ${rc}: ${e}")
  endif()
  # every command that takes a ckpt.pt takes its meta.pkl after it, as gpt import does
  expect_run("sample ckpt.pt meta.pkl" 0 "^To be" ${GPT} sample alone/ckpt.pt chars/meta.pkl --prompt "To be" -n 4 --greedy)
  expect_run("logits ckpt.pt meta.pkl" 0 "^\\{\"ok\":true,\"tokens\":\\[\"T\",\"o\"\\]" ${GPT} logits alone/ckpt.pt chars/meta.pkl --prompt To)
  expect_run("attention ckpt.pt meta.pkl" 0 "\"maps\"" ${GPT} attention alone/ckpt.pt chars/meta.pkl --prompt To)
  expect_run("inspect ckpt.pt meta.pkl" 0 "source +nanoGPT alone/ckpt.pt, iter 5000" ${GPT} inspect alone/ckpt.pt chars/meta.pkl)
  if(err MATCHES "found")
    message(FATAL_ERROR "inspect with its meta.pkl named: no search, no note; stderr: ${err}")
  endif()
  expect_run("eval ckpt.pt meta.pkl" 1 "holds a model only" ${GPT} eval alone/ckpt.pt chars/meta.pkl)
  # a meta.pkl found by nanoGPT's layout is named (on stderr), for every command that searches
  foreach(cmd "inspect" "sample;--prompt;To;-n;2" "logits;--prompt;To")
    list(POP_FRONT cmd name)
    expect_run("${name}: the meta.pkl found is named" 0 "." ${GPT} ${name} out/ckpt.pt ${cmd})
    if(NOT err MATCHES "gpt: out/ckpt.pt: its characters from out/../data/tiny_chars/meta.pkl \\(found by its dataset \"tiny_chars\"; to use another, name it after out/ckpt.pt\\)")
      message(FATAL_ERROR "${name}: stderr does not name the meta.pkl found: ${err}")
    endif()
  endforeach()
  # without one: what is missing and what to give, not GPT-2's tokenizer for 26 characters
  expect_run("no meta.pkl" 1 "gpt: alone/ckpt.pt: no meta.pkl: this model's vocabulary has 26 tokens, not GPT-2's 50,257, so it was trained on characters of its own: give its dataset's meta.pkl \\(nanoGPT's data/<dataset>/meta.pkl"
             ${GPT} sample alone/ckpt.pt --prompt To)
  if(out MATCHES "vocab.json")
    message(FATAL_ERROR "no meta.pkl: GPT-2's files offered for a 26-character model: ${out}")
  endif()
  # a text named .pt: the page's words
  expect_run("a text named .pt" 1 "gpt: renamed.pt is neither a PyTorch zip \\(ckpt.pt\\) nor a safetensors file: the header length" ${GPT} inspect renamed.pt)
  # surprisal of an opened model through gpt api: a forward pass and log-softmax, as a float64 nanoGPT
  run_api(foreign_surprisal
    "{\"call\":\"load\",\"path\":\"out/ckpt.pt\"}"
    "{\"call\":\"surprisal\",\"spec\":{\"text\":\"ROMEO: To be\"}}")
  expect_answer("api load ckpt.pt" "${answer_0}" "^\\{\"ok\":true")
  expect_answer("api surprisal of an opened model" "${answer_1}" "^\\{\"ok\":true,\"windows\":\\[\\{\"offset\":0,")
  file(WRITE ${tmp}/surprisal_answer.json "${answer_1}")
  expect_run("surprisal = float64 nanoGPT's" 0 "max" ${JSON_CLOSE} ${tmp}/surprisal_answer.json windows.0.losses ${tmp}/surprisal.json losses 1e-4)
endif()
