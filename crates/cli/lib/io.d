/*
 * io.d -- block I/O and open files as DTrace programs know them, for Linux.
 *
 * Part of dtrace's built-in D library (see procfs.d).  The io provider's probes give
 * each I/O as a bufinfo_t (the buffer: size, block, direction), a devinfo_t (the device)
 * and a fileinfo_t (the file, when known); fds[] gives the current process's open files
 * as fileinfo_t.  Linux's unit of block I/O is the struct bio: the io probes' three
 * arguments are translated from it.
 */

#pragma D depends_on provider io

/* A block I/O buffer (Solaris' struct buf), translated from a struct bio. */
typedef struct bufinfo {
	int b_flags;		/* B_READ or B_WRITE, B_ASYNC, B_PAGEIO or B_PHYS */
	size_t b_bcount;	/* number of bytes */
	caddr_t b_addr;		/* buffer address (a bio has pages, not one: 0) */
	uint64_t b_lblkno;	/* block number on the device (512-byte sectors) */
	uint64_t b_blkno;	/* the same */
	size_t b_resid;		/* bytes not transferred (not known: 0) */
	size_t b_bufsize;	/* size of the buffer (b_bcount) */
	caddr_t b_iodone;	/* completion routine (bio.bi_end_io) */
	int b_error;		/* error (not known where the probes fire: 0) */
	dev_t b_edev;		/* device number (Linux dev_t: getmajor, getminor) */
} bufinfo_t;

/* bufinfo_t.b_flags. */
inline int B_BUSY = 0x000001;
inline int B_DONE = 0x000002;
inline int B_ERROR = 0x000004;
inline int B_PAGEIO = 0x000010;		/* through the page cache */
inline int B_PHYS = 0x000020;		/* directly to or from user memory (O_DIRECT) */
inline int B_READ = 0x000040;
inline int B_WRITE = 0x000100;
inline int B_ASYNC = 0x000400;		/* nobody waits for it */

/* The operation is the low byte of bio.bi_opf; writing ones are odd (op_is_write). */
inline unsigned int LINUX_REQ_OP_MASK = 0xff;

/*
 * Linux's block flags as Oracle's D library names them for scripts: REQ_WRITE and REQ_SYNC
 * are masks of bio.bi_opf (a write op is odd; REQ_SYNC since 4.10), BIO_USER_MAPPED a bit
 * number of bio.bi_flags (kernels since 5.12 set it no more).
 */
inline int BIO_USER_MAPPED = 6;
inline int REQ_WRITE = 0x01;
inline int REQ_SYNC = 0x800;

/*
 * A bio is synchronous when it is a read or asks for REQ_SYNC, REQ_FUA or REQ_PREFLUSH
 * (the kernel's op_is_sync); its pages are user memory pinned for direct I/O when
 * BIO_PAGE_PINNED is set.
 */
translator bufinfo_t < struct bio *B > {
	b_flags = ((B->bi_opf & 1) ? B_WRITE : B_READ) |
	    ((B->bi_opf & LINUX_REQ_OP_MASK) == REQ_OP_READ ||
	    (B->bi_opf & ((1 << __REQ_SYNC) | (1 << __REQ_FUA) | (1 << __REQ_PREFLUSH))) ?
	    0 : B_ASYNC) |
	    ((B->bi_flags & (1 << BIO_PAGE_PINNED)) ? B_PHYS : B_PAGEIO);
	b_bcount = B->bi_iter.bi_size;
	b_addr = 0;
	b_lblkno = B->bi_iter.bi_sector;
	b_blkno = B->bi_iter.bi_sector;
	b_resid = 0;
	b_bufsize = B->bi_iter.bi_size;
	b_iodone = (caddr_t)B->bi_end_io;
	b_error = 0;
	b_edev = B->bi_bdev == NULL ? 0 : B->bi_bdev->bd_dev;
};

/* A device, translated from the block device (disk or partition) of a struct bio. */
typedef struct devinfo {
	int dev_major;		/* major number */
	int dev_minor;		/* minor number */
	int dev_instance;	/* instance number (0) */
	string dev_name;	/* driver of the disk's device ("<none>" when it has none) */
	string dev_statname;	/* the kernel's name of the disk or partition (sda1) */
	string dev_pathname;	/* physical path (not known: "<unknown>") */
} devinfo_t;

translator devinfo_t < struct bio *B > {
	dev_major = B->bi_bdev == NULL ? 0 : getmajor(B->bi_bdev->bd_dev);
	dev_minor = B->bi_bdev == NULL ? 0 : getminor(B->bi_bdev->bd_dev);
	dev_instance = 0;
	dev_name = B->bi_bdev != NULL && B->bi_bdev->bd_disk->part0->bd_device.parent != NULL &&
	    B->bi_bdev->bd_disk->part0->bd_device.parent->driver != NULL ?
	    stringof(B->bi_bdev->bd_disk->part0->bd_device.parent->driver->name) : "<none>";
	dev_statname = B->bi_bdev == NULL ? "<none>" :
	    stringof(B->bi_bdev->bd_device.kobj.name);
	dev_pathname = "<unknown>";
};

/* A file. */
typedef struct fileinfo {
	string fi_name;		/* name (basename of fi_pathname) */
	string fi_dirname;	/* directory (dirname of fi_pathname) */
	string fi_pathname;	/* full pathname, as seen from the process's root */
	int64_t fi_offset;	/* offset within the file */
	string fi_fs;		/* file system type */
	string fi_mount;	/* mount point (not known: "<unknown>") */
	int fi_oflags;		/* open(2) flags of the file descriptor */
} fileinfo_t;

/* fileinfo_t.fi_oflags (Linux, x86_64). */
inline int O_ACCMODE = 0003;
inline int O_RDONLY = 00;
inline int O_WRONLY = 01;
inline int O_RDWR = 02;
inline int O_CREAT = 0100;
inline int O_EXCL = 0200;
inline int O_NOCTTY = 0400;
inline int O_TRUNC = 01000;
inline int O_APPEND = 02000;
inline int O_NONBLOCK = 04000;
inline int O_NDELAY = 04000;
inline int O_DSYNC = 010000;
inline int O_ASYNC = 020000;
inline int O_DIRECT = 040000;
inline int O_LARGEFILE = 0100000;
inline int O_DIRECTORY = 0200000;
inline int O_NOFOLLOW = 0400000;
inline int O_NOATIME = 01000000;
inline int O_CLOEXEC = 02000000;
inline int O_SYNC = 04010000;
inline int O_FSYNC = 04010000;
inline int O_RSYNC = 04010000;
inline int O_PATH = 010000000;

/* A struct file; NULL (no file) gives "<none>" and zeros. */
translator fileinfo_t < struct file *F > {
	fi_name = F == NULL ? "<none>" : stringof(F->f_path.dentry->d_name.name);
	fi_dirname = F == NULL ? "<none>" : dirname(d_path(&F->f_path));
	fi_pathname = F == NULL ? "<none>" : d_path(&F->f_path);
	fi_offset = F == NULL ? 0 : F->f_pos;
	fi_fs = F == NULL ? "<none>" : stringof(F->f_path.mnt->mnt_sb->s_type->name);
	fi_mount = F == NULL ? "<none>" : "<unknown>";
	fi_oflags = F == NULL ? 0 : F->f_flags;
};

/* Linux file types (inode.i_mode). */
inline unsigned int LINUX_S_IFMT = 0170000;
inline unsigned int LINUX_S_IFREG = 0100000;

/*
 * The first page of a bio's data (NULL for a bio without data): in the vector entry its
 * iterator is at (not the vector's first entry for a split or cloned bio).
 */
inline struct page *linux_bio_page[struct bio *B] =
    B->bi_io_vec == NULL || B->bi_iter.bi_size == 0 ? (struct page *)NULL :
    B->bi_io_vec[B->bi_iter.bi_idx].bv_page;

/*
 * The folio holding it: the page itself, or the head its compound_head points to (with
 * bit 0 set) when it is a compound page's tail.
 */
inline struct folio *linux_bio_folio[struct bio *B] = (struct folio *)(
    linux_bio_page[B] == NULL ? 0 :
    linux_bio_page[B]->compound_head & 1 ? linux_bio_page[B]->compound_head - 1 :
    (uintptr_t)linux_bio_page[B]);

/*
 * Whether a folio is in a file's page cache: its mapping is an address space (not
 * anonymous memory: the low bits clear) of a regular file's inode.
 */
inline int linux_file_folio[struct folio *F] = F != NULL && F->mapping != NULL &&
    ((uintptr_t)F->mapping & 3) == 0 &&
    (F->mapping->host->i_mode & LINUX_S_IFMT) == LINUX_S_IFREG;

/*
 * The file of a bio, when its first page is in a file's page cache (buffered I/O, a
 * program's pages): its name (the inode's first dentry), its offset and its file system;
 * the inode does not know the mount it was reached by, so the path is "<unknown>".
 * Other bios (O_DIRECT ones, whose pages are the program's memory; a block device's own
 * cache of metadata) have no file: "<none>".
 */
translator fileinfo_t < struct bio *B > {
	fi_name = !linux_file_folio[linux_bio_folio[B]] ? "<none>" :
	    linux_bio_folio[B]->mapping->host->i_dentry.first == NULL ? "<unknown>" :
	    stringof(((struct dentry *)((char *)linux_bio_folio[B]->mapping->host->i_dentry.first -
	    offsetof(struct dentry, d_u)))->d_name.name);
	fi_dirname = linux_file_folio[linux_bio_folio[B]] ? "<unknown>" : "<none>";
	fi_pathname = linux_file_folio[linux_bio_folio[B]] ? "<unknown>" : "<none>";
	fi_offset = !linux_file_folio[linux_bio_folio[B]] ? 0 :
	    (linux_bio_folio[B]->index +
	    ((uintptr_t)linux_bio_page[B] - (uintptr_t)linux_bio_folio[B]) /
	    sizeof (struct page)) * 4096 +
	    B->bi_io_vec[B->bi_iter.bi_idx].bv_offset + B->bi_iter.bi_bvec_done;
	fi_fs = linux_file_folio[linux_bio_folio[B]] ?
	    stringof(linux_bio_folio[B]->mapping->host->i_sb->s_type->name) : "<none>";
	fi_mount = linux_file_folio[linux_bio_folio[B]] ? "<unknown>" : "<none>";
	fi_oflags = 0;
};

/*
 * The current process's open file descriptors; one not open (or a kernel thread's, which
 * has no file table) gives "<none>".
 */
inline fileinfo_t fds[int fd] = xlate <fileinfo_t> (
    curthread->files != NULL && fd >= 0 && fd < curthread->files->fdt->max_fds ?
    curthread->files->fdt->fd[fd] : (struct file *)NULL);
