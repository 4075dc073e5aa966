# gpt_cli_test.cmake — runs the `gpt` CLI as a user would and checks exit codes, output and files.
# ctest runs one part per test, so they run in parallel and fail separately:
#   cmake -DGPT=<gpt> -DATTENTION=<attention> -DJSON_CLOSE=<json_close> -DWORK=<dir> -DPART=<part>
#         -P tests/gpt_cli_test.cmake
# Parts: usage (options, bad numbers, bad text files), api (a scripted `gpt api` session).
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

set(MODEL --n-layer 1 --n-embd 16 --n-head 2 --block-size 16 --batch-size 4 --n-chars 2000)
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
    "{\"call\":\"info\"}")
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
endif()
