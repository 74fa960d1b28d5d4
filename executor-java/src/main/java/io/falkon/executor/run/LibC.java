package io.falkon.executor.run;

import com.sun.jna.LastErrorException;
import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Pointer;

/**
 * The few libc calls the posix runner needs, bound with JNA's direct mapping (static natives:
 * no proxy, no reflection per call). Linux with glibc 2.34 or newer
 * ({@code posix_spawn_file_actions_addclosefrom_np}, {@code ..._addchdir_np}).
 */
final class LibC {
    static final int O_RDONLY = 0;
    static final int O_WRONLY = 1;
    static final int O_CREAT = 0100;
    static final int O_TRUNC = 01000;

    static final short POSIX_SPAWN_SETPGROUP = 0x02;
    static final short POSIX_SPAWN_SETSIGDEF = 0x04;
    static final short POSIX_SPAWN_SETSIGMASK = 0x08;

    static final int P_PID = 1;
    static final int WEXITED = 4;
    static final int WNOWAIT = 0x01000000;
    static final int SIGKILL = 9;
    static final int SIGSTOP = 19;
    static final int EINTR = 4;
    static final int ESRCH = 3;

    /** Generous sizes for glibc's opaque types (x86_64: 80, 336, 128, 128 bytes). */
    static final int FILE_ACTIONS_SIZE = 256;
    static final int SPAWNATTR_SIZE = 1024;
    static final int SIGSET_SIZE = 256;
    static final int SIGINFO_SIZE = 256;

    private static final Throwable UNAVAILABLE;

    static {
        Throwable why = null;
        try {
            if (!System.getProperty("os.name", "").startsWith("Linux")) {
                throw new UnsupportedOperationException("not Linux");
            }
            NativeLibrary libc = NativeLibrary.getInstance("c");
            // fail now, not at the first task, if this glibc is too old
            libc.getFunction("posix_spawn_file_actions_addclosefrom_np");
            libc.getFunction("posix_spawn_file_actions_addchdir_np");
            Native.register(LibC.class, libc);
        } catch (Throwable t) {
            why = t;
        }
        UNAVAILABLE = why;
    }

    private LibC() {
    }

    /** Null if usable, else why not. */
    static Throwable unavailable() {
        return UNAVAILABLE;
    }

    static native int posix_spawn_file_actions_init(Pointer actions);

    static native int posix_spawn_file_actions_destroy(Pointer actions);

    static native int posix_spawn_file_actions_addopen(Pointer actions, int fd, String path, int flags, int mode);

    static native int posix_spawn_file_actions_addchdir_np(Pointer actions, String dir);

    static native int posix_spawn_file_actions_addclosefrom_np(Pointer actions, int from);

    static native int posix_spawnattr_init(Pointer attr);

    static native int posix_spawnattr_destroy(Pointer attr);

    static native int posix_spawnattr_setflags(Pointer attr, short flags);

    static native int posix_spawnattr_setpgroup(Pointer attr, int pgroup);

    static native int posix_spawnattr_setsigmask(Pointer attr, Pointer sigset);

    static native int posix_spawnattr_setsigdefault(Pointer attr, Pointer sigset);

    static native int sigemptyset(Pointer set);

    static native int sigfillset(Pointer set);

    static native int sigdelset(Pointer set, int signal);

    /** Returns 0 or an error number (not errno). */
    static native int posix_spawn(int[] pid, String path, Pointer actions, Pointer attr, Pointer argv, Pointer envp);

    /** Like posix_spawn, searching PATH for a name without a slash. */
    static native int posix_spawnp(int[] pid, String file, Pointer actions, Pointer attr, Pointer argv, Pointer envp);

    static native int waitid(int idtype, int id, Pointer info, int options) throws LastErrorException;

    static native int waitpid(int pid, int[] status, int options) throws LastErrorException;

    static native int kill(int pid, int signal) throws LastErrorException;

    static native String strerror(int errnum);
}
