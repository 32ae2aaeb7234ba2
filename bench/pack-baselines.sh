#!/usr/bin/env bash
# Packs the baseline programs and data for the GPU host (which has no Debian packages and no
# network) into .baselines/ (kept out of git): bwa, bowtie2-align-s, bowtie2-build-s, samtools,
# art_illumina, mason_variator and mason_simulator (seqan-apps; bench/run-gapped.sh) with the
# shared libraries they need beyond the C/C++ runtime, and the E. coli 536 genome of Debian's
# bowtie-examples. Run it HERE (the machine with the packages), from the
# repository root:
#
#   bench/pack-baselines.sh            then on the GPU host: source .baselines/env.sh
#
# ART (art-nextgen-simulation-tools, MountRainier) has its Illumina quality profiles (HS25,
# MSv3, ...) compiled in, so no profile files are needed at run time.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bundle="${DEVICE_BUNDLE:-$root/../shared/tools/device-bundle}"
genome="${WTMAP_ECOLI_FA:-/usr/share/doc/bowtie/examples/genomes/NC_008253.fna.gz}"
progs=(/usr/bin/bwa /usr/bin/bowtie2-align-s /usr/bin/bowtie2-build-s /usr/bin/samtools /usr/bin/art_illumina
       /usr/lib/seqan/bin/mason_variator /usr/lib/seqan/bin/mason_simulator)

for p in "${progs[@]}"; do [[ -x "$p" ]] || { echo "pack-baselines: $p missing (apt-get install bwa bowtie2 samtools art-nextgen-simulation-tools seqan-apps)" >&2; exit 1; }; done
[[ -r "$genome" ]] || { echo "pack-baselines: $genome missing (apt-get install bowtie-examples)" >&2; exit 1; }
[[ -x "$bundle" ]] || { echo "pack-baselines: $bundle missing" >&2; exit 1; }

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cp "${progs[@]}" "$tmp/"
"$bundle" "$tmp" .baselines          # writes .baselines/bin, lib, env.sh (removes the old folder)
mkdir -p .baselines/data
cp "$genome" .baselines/data/ecoli536.fa.gz
echo "export WTMAP_ECOLI_FA=\"\$here/data/ecoli536.fa.gz\"" >> .baselines/env.sh
# versions, for the result tables
{
  for p in "${progs[@]}"; do echo "${p##*/}: $(dpkg -S "$p" 2>/dev/null | cut -d: -f1 | head -1) $(dpkg-query -W -f='${Version}' "$(dpkg -S "$p" 2>/dev/null | cut -d: -f1 | head -1)" 2>/dev/null)"; done
  echo "ecoli536.fa.gz: $genome ($(dpkg -S "$genome" 2>/dev/null | cut -d: -f1))"
} > .baselines/VERSIONS
grep -qxF '/.baselines/' .gitignore || echo '/.baselines/' >> .gitignore

size_kb=$(du -sk .baselines | cut -f1)
echo "pack-baselines: .baselines is $((size_kb / 1024)) MiB"
cat .baselines/VERSIONS
ls .baselines/bin .baselines/lib
if (( size_kb > 20 * 1024 )); then
  echo "pack-baselines: .baselines is over 20 MiB" >&2
  exit 1
fi
# smoke test: every program starts with the bundled libraries
(
  source .baselines/env.sh
  { bwa 2>&1 || true; } | grep Version
  samtools --version | head -1
  bowtie2-align-s --version | head -1
  bowtie2-build-s --version | head -1
  { art_illumina 2>&1 || true; } | grep 'Version' | head -1
  mason_variator --version | grep -i version
  mason_simulator --version | grep -i version
) || { echo "pack-baselines: a bundled program does not start" >&2; exit 1; }
echo "pack-baselines: done; on the GPU host: source .baselines/env.sh (carry .baselines)"
