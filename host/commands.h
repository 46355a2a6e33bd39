/* commands.h - the subcommands of the leakaudit program; each returns the process exit code. */
#ifndef LA_COMMANDS_H
#define LA_COMMANDS_H

int la_cmd_audit(int argc, char **argv);
int la_cmd_split(int argc, char **argv);
int la_cmd_doctor(int argc, char **argv);
int la_cmd_embed(int argc, char **argv);
int la_cmd_models(int argc, char **argv);

#endif /* LA_COMMANDS_H */
