/* commands.h - the subcommands of the leakaudit program; each returns the process exit code. */
#ifndef LA_COMMANDS_H
#define LA_COMMANDS_H

int la_cmd_audit(int argc, char **argv);
int la_cmd_split(int argc, char **argv);
int la_cmd_doctor(int argc, char **argv);
int la_cmd_embed(int argc, char **argv);
int la_cmd_models(int argc, char **argv);
int la_cmd_merge(int argc, char **argv);

struct la_audit_job;
/* Run the audit a parsed job describes (pipeline.h), write its files and print its summary (a
 * shard's one line); the exit code. Errors are prefixed "leakaudit COMMAND:". */
int la_audit_command_run(struct la_audit_job *job, const char *command);

#endif /* LA_COMMANDS_H */
