/* par.h: the ranks of an MPI job (par_mpi.c, built where MPI is found) or one process
 * alone (par_serial.c): the only place that speaks MPI.
 *
 * Protocol that keeps a failing job from hanging: ranks take the same path from one
 * agreement (par_agree) to the next, and every collective call sits on that path. A
 * local failure between two agreements (a bad argument, a failed write) is reported and
 * carried to the next one as a status, which all ranks then return; a rank that dies
 * makes mpirun end the others. Ranks other than 0 hold their stderr in memory until an agreement: there only the
 * lowest failing rank's lines are shown, so that a bad argument given to all ranks is
 * reported once. */
#ifndef MBD_PAR_H
#define MBD_PAR_H

#include <stddef.h>

/* Joins the MPI job when a launcher (mpirun, srun) started this process; alone
 * otherwise. Returns 0, or CLI_RUNTIME_ERROR (reported) if MPI cannot start. */
int par_start(int *argc, char ***argv);
int par_rank(void);
int par_size(void);
/* This machine's name, for results that say where they were measured. */
const char *par_host(void);

/* Collective: the largest status over the ranks (0 when all are 0); the lowest failing
 * rank's held stderr is shown. */
int par_agree(int status);
/* The last agreement on status (none if one already failed), then MPI_Finalize; returns
 * the agreed status. Every rank calls it once, at exit. */
int par_finish(int status);

/* Collective: the sum over the ranks. */
long long par_sum(long long x);
/* Collective: rank 0 receives every rank's text, in rank order, in texts[size] (free
 * each, then the array); others get NULL. Returns 0 or CLI_RUNTIME_ERROR. */
int par_gather_text(const char *text, char ***texts);

/* One output file that every rank writes parts of, at offsets: a temporary file beside
 * path until par_file_close, so that a failed job never replaces a complete file. */
typedef struct par_file par_file;
/* Collective; NULL (reported, on some rank) makes every rank's NULL. */
par_file *par_file_open(const char *cmd, const char *path);
/* Independent; 0, or CLI_RUNTIME_ERROR after reporting. */
int par_file_write_at(par_file *file, long long offset, const void *data, size_t size);
/* Collective: closes, agrees on status, and then renames the file onto its path (rank 0)
 * or removes it. Returns the agreed status, or else the rename's, on every rank. */
int par_file_close(par_file *file, int status);

#endif
