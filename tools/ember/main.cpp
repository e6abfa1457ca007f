// tools/ember/main.cpp: the `ember` program -- `ember info`, `ember train`, `ember eval`,
// `ember embed`, `ember generate`, `ember run`. Errors become one line on stderr and a non-zero
// exit, never a stack dump.
#include <CLI/CLI.hpp>

#include <cstdlib>
#include <exception>
#include <iostream>

#include "cli_checks.h"
#include "commands.h"
#include "distributed_run.h"
#include "ember/error.h"
#include "gpt_options.h"
#include "omp_policy.h"
#include "output.h"

int main(int argc, char** argv) {
  using namespace ember::cli;
  apply_omp_spin_policy(argv);
  CLI::App app{
      "ember: train and evaluate models on Fashion-MNIST, and a character-level GPT, on the best "
      "device here"};
  app.require_subcommand(0, 1);

  app.add_subcommand("info", "Report the devices (the tutorial's availability checks) and build");

  TrainOptions train;
  CLI::App* t =
      app.add_subcommand("train", "Train a model on Fashion-MNIST, or a GPT on a text file");
  t->add_option("--model", train.model, "mlp, cnn or gpt")
      ->check(CLI::IsMember({"mlp", "cnn", "gpt"}))
      ->capture_default_str();
  t->add_option("--device", train.device, "auto, cpu, cuda or cuda:N")->capture_default_str();
  t->add_option("--epochs", train.epochs, "Epochs to train")
      ->check(integer_in(1, 100000))
      ->capture_default_str();
  t->add_option("--batch-size", train.batch_size, "Samples per batch (default 64; 12 for gpt)")
      ->check(integer_in(1, int64_t{1} << 20));
  t->add_option("--lr", train.lr, "Learning rate")->check(positive_number())->capture_default_str();
  t->add_option("--optimizer", train.optimizer, "adam, adamw or sgd")
      ->check(CLI::IsMember({"adam", "adamw", "sgd"}))
      ->capture_default_str();
  t->add_option("--seed", train.seed, "Random seed (initialisation, shuffling, dropout)")
      ->check(unsigned_integer())
      ->capture_default_str();
  t->add_option("--data", train.data,
                "Directory with the IDX files (default: /usr/share/datasets/fashion-mnist); for "
                "gpt a text file (default: /usr/share/games/fortunes/cookie)");
  t->add_option("--out", train.out,
                "Directory for metrics.csv, curves.svg and checkpoint.safetensors")
      ->capture_default_str();
  t->add_flag("--resume", train.resume, "Continue from the checkpoint in --out");
  t->add_option("--amp", train.amp,
                "Mixed precision: none, bf16 (autocast in bfloat16) or fp16 (autocast in float16 "
                "with loss scaling)")
      ->check(CLI::IsMember({"none", "bf16", "fp16"}))
      ->capture_default_str();
  t->add_option("--loss-axis", train.loss_axis,
                "The loss axis of curves.svg: linear, log, or auto (log when the losses span more "
                "than a factor of 20)")
      ->check(CLI::IsMember({"auto", "linear", "log"}))
      ->capture_default_str();
  t->add_option("--workers", train.workers, "Background threads preparing batches")
      ->check(integer_in(0, 256))
      ->capture_default_str();

  t->add_option("--nproc-per-node,--nproc_per_node", train.nproc_per_node,
                "Train data-parallel on N processes of this machine (DistributedDataParallel; "
                "--batch-size is split over them); `ember run` starts jobs across machines")
      ->check(integer_in(1, 1024));
  t->add_flag("--oversubscribe", train.oversubscribe,
              "Allow --nproc-per-node above 4 processes per CPU core");

  add_gpt_train_options(*t, train.gpt);

  EvalOptions eval;
  CLI::App* e = app.add_subcommand("eval", "Test accuracy and confusion matrix of a checkpoint");
  e->add_option("--checkpoint", eval.checkpoint, "A checkpoint written by `ember train`")
      ->required();
  e->add_option("--device", eval.device, "auto, cpu, cuda or cuda:N")->capture_default_str();
  e->add_option("--data", eval.data, "Directory with the IDX files");

  EmbedOptions embed;
  CLI::App* m = app.add_subcommand(
      "embed", "Sentence embeddings of texts with a sentence-transformers (BERT) model folder");
  m->add_option("--model", embed.model,
                "Folder with config.json, tokenizer.json and the weights (model.safetensors or "
                "pytorch_model.bin, single or sharded with an index; and modules.json, "
                "1_Pooling/ of sentence-transformers)")
      ->required();
  m->add_option("texts", embed.texts, "The texts to embed")->required();
  m->add_flag("--similarity", embed.similarity, "Print the cosine similarities of the texts");
  m->add_option("--device", embed.device, "auto, cpu, cuda or cuda:N")->capture_default_str();
  m->add_option("--batch-size", embed.batch_size, "Texts per forward pass")
      ->check(integer_in(1, int64_t{1} << 20))
      ->capture_default_str();

  GenerateOptions generate;
  CLI::App* g = app.add_subcommand(
      "generate", "Generate text with a language model (--model) or a GPT checkpoint");
  add_generate_options(*g, generate);

  LaunchOptions launch;
  CLI::App* r = app.add_subcommand(
      "run", "Start processes of a program with torchrun's environment (RANK, WORLD_SIZE, ...)");
  r->add_option("--nproc-per-node,--nproc_per_node", launch.nproc_per_node,
                "Processes on this node")
      ->capture_default_str();
  r->add_flag("--oversubscribe", launch.oversubscribe,
              "Allow --nproc-per-node above 4 processes per CPU core");
  r->add_option("--nnodes", launch.nnodes, "Nodes in the job")->capture_default_str();
  r->add_option("--node-rank,--node_rank", launch.node_rank, "This node's rank, 0 .. nnodes-1")
      ->capture_default_str();
  r->add_option("--master-addr,--master_addr", launch.master_addr, "Address of rank 0's node")
      ->capture_default_str();
  r->add_option("--master-port,--master_port", launch.master_port, "Port rank 0 listens on")
      ->capture_default_str();
  // PROGRAM and everything after it are the program's, even arguments that start with '-'
  // (positionals_at_end: once the first positional is seen, the rest are positionals too).
  r->add_option("program", launch.command,
                "The program to start (a path or a name on PATH), then its arguments")
      ->required();
  r->positionals_at_end();
  r->footer(
      "Every line the processes write is prefixed with \"[rankK]: \". When one fails, the others "
      "get SIGTERM, then SIGKILL after EMBER_RUN_GRACE_S seconds (default 5).");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& err) {
    if (err.get_exit_code() == 0) return app.exit(err);  // --help
    // Bad arguments get the same one-line error as every other failure.
    std::cerr << "ember: error: " << err.what() << " (see ember --help)\n";
    return 1;
  }
  try {
    int status = 0;
    const char* world = std::getenv("WORLD_SIZE");
    if (app.got_subcommand("info"))
      status = run_info();
    else if (app.got_subcommand("eval"))
      status = run_eval(eval);
    else if (app.got_subcommand("embed"))
      status = run_embed(embed);
    else if (app.got_subcommand("generate"))
      status = run_generate(generate);
    else if (app.got_subcommand("run"))
      status = run_launcher(launch);
    else if (train.nproc_per_node > 0 && !(world && *world))
      // --nproc-per-node outside a launched job: start the job, this command on every rank.
      status = relaunch_as_job(argc, argv, train.nproc_per_node, train.oversubscribe);
    else
      status = run_train(train);  // `ember` alone trains with the defaults
    flush_stdout_checked();       // a result cut short by a full disk is a failure
    return status;
  } catch (const ember::Error& err) {
    std::cerr << "ember: error: " << err.what() << "\n";
  } catch (const std::exception& err) {
    std::cerr << "ember: error: " << err.what() << "\n";
  }
  return 1;
}
