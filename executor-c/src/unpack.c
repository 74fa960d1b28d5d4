#include "unpack.h"

#include "fsutil.h"
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* What the tool said on its standard error (its first line, kept in stderr_path), as a refusal the Java
 * executor words the same way where it can: a member that would land outside the directory. */
static void tool_said(const char *tool, int status, const char *stderr_path, char *err, size_t errlen) {
    char first[512] = "", line[512];
    FILE *f = stderr_path ? fopen(stderr_path, "r") : NULL;
    while (f && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        const char *marker = strstr(line, ": Member name contains '..'");
        if (strncmp(line, "tar: ", 5) == 0 && marker) {
            fk_errf(err, errlen, "tar entry '%.*s' would be written outside its directory", (int)(marker - line - 5),
                    line + 5);
            fclose(f);
            return;
        }
        if (!first[0]) {
            snprintf(first, sizeof first, "%s", line);
        }
    }
    if (f) {
        fclose(f);
    }
    if (first[0]) {
        fk_errf(err, errlen, "%s failed (status %d): %s", tool, status, first);
    } else {
        fk_errf(err, errlen, "%s failed (status %d): the archive is damaged or not of that kind", tool, status);
    }
}

static int run_tool(char *const argv[], const char *stdout_path, const char *stderr_path, char *err, size_t errlen) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    if (stdout_path) {
        posix_spawn_file_actions_addopen(&fa, 1, stdout_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    } else {
        posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    }
    posix_spawn_file_actions_addopen(&fa, 2, stderr_path ? stderr_path : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0600);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        fk_errf(err, errlen, "cannot run %s: %s", argv[0], strerror(rc));
        return -1;
    }
    int status;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            fk_errf(err, errlen, "waiting for %s: %s", argv[0], strerror(errno));
            return -1;
        }
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        tool_said(argv[0], WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), stderr_path, err, errlen);
        return -1;
    }
    return 0;
}

int64_t fk_unpack(const char *packed, int mode, const char *target, char *err, size_t errlen) {
    int rc;
    char said[PATH_MAX + 16]; /* the tool's standard error, beside the packed file (both Falkon's own) */
    snprintf(said, sizeof said, "%s.stderr", packed);
    if (mode == 1) {
        char *argv[] = {"gzip", "-d", "-c", "--", (char *)packed, NULL};
        rc = run_tool(argv, target, said, err, errlen);
    } else if (mode == 2 || mode == 3) {
        if (fk_mkdirs(target) != 0) {
            fk_errf(err, errlen, "cannot create %s: %s", target, strerror(errno));
            return -1;
        }
        /* GNU tar refuses members that would land outside the directory; links are refused below */
        char *argv[] = {"tar", mode == 3 ? "-xzf" : "-xf", (char *)packed, "-C", (char *)target, "--no-same-owner",
                        "--no-same-permissions", NULL};
        rc = run_tool(argv, NULL, said, err, errlen);
    } else {
        fk_errf(err, errlen, "nothing to unpack for mode %d", mode);
        return -1;
    }
    unlink(said);
    if (rc != 0) {
        fk_rmtree(target);
        return -1;
    }
    char link[PATH_MAX];
    int64_t n = fk_tree_size_plain(target, link, sizeof link);
    if (n == -2) {
        /* a link could lead a task, or the cache, to a file outside the object */
        fk_errf(err, errlen, "the archive holds a link ('%s'): archives unpacked for tasks may hold only files and "
            "directories", link);
    } else if (n < 0) {
        fk_errf(err, errlen, "cannot measure %s: %s", target, strerror(errno));
    }
    if (n < 0) {
        fk_rmtree(target);
        return -1;
    }
    return n;
}
