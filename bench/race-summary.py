# Summary of bench/race-compare.sh: python3 bench/race-summary.py OUTDIR
import sys,glob,statistics as st,re,collections
d=sys.argv[1]
tc=collections.defaultdict(list); mp=collections.defaultdict(list); rat=collections.defaultdict(list)
for f in glob.glob(d+"/*.txt"):
    m=re.search(r"/(\w+)-(\w+)-(\w+)-(\w+)-(\w+)-r(\d+)\.txt",f)
    mpi,mode,op,ty,ro,r=m.groups()
    for line in open(f):
        if line.startswith('#') or not line.strip(): continue
        p=line.split()
        try: s=int(p[0]); t=float(p[1]); q=float(p[2])
        except: continue
        k=(op,ty,ro,mpi,mode,s); tc[k].append(t); mp[k].append(q); rat[k].append(t/q)
def fs(s):
    return f"{s>>20} MiB" if s>=1<<20 else f"{s>>10} KiB"
for spec in ["allreduce float sum","allreduce double max","reduce float sum","bcast byte x"]:
  op,ty,ro=spec.split()
  sizes=sorted(set(k[5] for k in tc if k[:3]==(op,ty,ro)))
  print(f"\n{op} {ty} {ro}: TC us / MPI us (median of per-run ratios) [runs]")
  print("| size | Open MPI, race on | Open MPI, race off | MPICH, race on | MPICH, race off |")
  print("|---|---|---|---|---|")
  for s in sizes:
    row=[]
    for mpi in ["ompi","mpich"]:
      for mode in ["race","norace"]:
        k=(op,ty,ro,mpi,mode,s)
        if not tc[k]: row.append("-"); continue
        row.append(f"{st.median(tc[k]):.4g} / {st.median(mp[k]):.4g} ({st.median(rat[k]):.2f}) [{len(tc[k])}]")
    print(f"| {fs(s)} | "+" | ".join(row)+" |")
