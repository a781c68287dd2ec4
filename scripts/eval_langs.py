"""Per-language reading quality: a small generated corpus per language, read by ``flowocr run --lang L`` and scored.

    python scripts/eval_langs.py [--langs ru,ko,ar,th,...] [--videos 6] [--seed 1] [--out DIR] [--json OUT.json]

For each language, ``--videos`` videos (720p, 25 fps, 10 s, H.264) are generated into ``DIR/<lang>/`` (default
``$XDG_CACHE_HOME/flowocr/langs``; kept, and not made again when present): four cues each, drawn from our own texts
of that language (:data:`TEXTS`), burned in with ffmpeg's ``subtitles`` filter (libass, which shapes Arabic, Thai
and Devanagari and lays out right-to-left lines) as white text with a black outline (2-3 px) in one of the
language's fonts (:data:`FONTS`, those installed here: Debian's ``fonts-noto-core``, ``fonts-noto-cjk``,
``fonts-thai-tlwg``, ``fonts-dejavu-core``), 38-52 px, over a moving lavfi picture (Mandelbrot zoom, gradients,
cellular automaton, Life, moving noise). The SRT given to libass is the truth.

Each video is read with ``flowocr run VIDEO --lang L --formats srt -q`` (default options otherwise; a process of
this interpreter) and scored with :func:`flowocr.cues.score.score_cues` on the video's own frame times: exact lines,
CER, missed and phantom cues (a reading's line breaks count as spaces: each truth is one line, which libass may
wrap). Prints one line per video and a table per language; ``--json`` writes it all.

Fonts are found by fontconfig (``fc-list``; libass asks it too). Fonts not installed system-wide can be given with
``FONTCONFIG_FILE`` (a ``fonts.conf`` that includes ``/etc/fonts/fonts.conf`` and adds a ``<dir>``): installing
font packages system-wide changes what ``scripts/make_corpus.py`` draws for every seed on that machine (it draws
from every installed family), so measure with a private configuration on a machine others measure on.
Exit 0 when every video was read, 8 when some run failed (counted as predicting nothing).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

from flowocr.cues.score import score_cues
from flowocr.output import read_srt

#: Our own subtitle lines, a dozen per language (everyday dialogue, punctuation as subtitles use it).
TEXTS: dict[str, tuple[str, ...]] = {
    "ru": ("Мы читаем субтитры из видео", "Привет, как дела?", "Я не знаю, что сказать", "Где ты был вчера вечером?",
           "Это очень важно для нас", "Пойдём домой, уже поздно", "Спасибо за помощь", "Он вернётся через час",
           "Давай начнём сначала", "Ничего страшного не случилось", "Сегодня холодно и ветрено",
           "Мне нужно подумать"),
    "uk": ("Привіт, як справи сьогодні?", "Я чекаю на тебе біля школи", "Дякую за допомогу", "Де ти був учора?",
           "Це дуже важливо для нас", "Ходімо додому, вже пізно", "Він повернеться за годину",
           "Нічого страшного не сталося", "Сьогодні холодно і вітряно", "Мені треба подумати"),
    "ko": ("우리는 영상에서 자막을 읽습니다", "안녕하세요, 잘 지내세요?", "무슨 말을 해야 할지 모르겠어요",
           "어제 저녁에 어디 있었어요?", "이건 우리에게 정말 중요해요", "이제 늦었으니 집에 가자", "도와줘서 고마워요",
           "한 시간 뒤에 돌아올 거예요", "처음부터 다시 시작하자", "아무 일도 없었어요", "오늘은 춥고 바람이 불어요",
           "생각할 시간이 필요해요"),
    "ar": ("نحن نقرأ الترجمة من الفيديو", "مرحبا، كيف حالك؟", "لا أعرف ماذا أقول", "أين كنت مساء أمس؟",
           "هذا مهم جدا بالنسبة لنا", "لنذهب إلى البيت، الوقت متأخر", "شكرا على مساعدتك", "سيعود بعد ساعة",
           "لنبدأ من جديد", "لم يحدث شيء خطير", "الجو بارد اليوم", "أحتاج إلى التفكير"),
    "he": ("אנחנו קוראים כתוביות מהסרטון", "שלום, מה שלומך?", "אני לא יודע מה להגיד", "איפה היית אתמול בערב?",
           "זה חשוב מאוד בשבילנו", "בוא נלך הביתה, כבר מאוחר", "תודה על העזרה", "הוא יחזור בעוד שעה",
           "בוא נתחיל מההתחלה", "שום דבר רע לא קרה", "היום קר ויש רוח", "אני צריך לחשוב"),
    "th": ("เรากำลังอ่านคำบรรยายจากวิดีโอ", "สวัสดีครับ สบายดีไหม", "ฉันไม่รู้จะพูดอะไร", "เมื่อคืนคุณไปอยู่ที่ไหน",
           "เรื่องนี้สำคัญมากสำหรับเรา", "กลับบ้านกันเถอะ ดึกแล้ว", "ขอบคุณที่ช่วยเหลือ", "เขาจะกลับมาในอีกหนึ่งชั่วโมง",
           "เริ่มต้นใหม่กันเถอะ", "ไม่มีอะไรร้ายแรงเกิดขึ้น", "วันนี้อากาศหนาว", "ฉันต้องการเวลาคิด"),
    "el": ("Διαβάζουμε υπότιτλους από το βίντεο", "Γεια σου, τι κάνεις;", "Δεν ξέρω τι να πω",
           "Πού ήσουν χθες το βράδυ;", "Αυτό είναι πολύ σημαντικό", "Πάμε σπίτι, είναι αργά",
           "Ευχαριστώ για τη βοήθεια",
           "Θα γυρίσει σε μια ώρα", "Ας ξεκινήσουμε από την αρχή", "Δεν έγινε τίποτα κακό"),
    "vi": ("Chúng tôi đọc phụ đề từ video", "Xin chào, bạn khỏe không?", "Tôi không biết phải nói gì",
           "Tối qua bạn ở đâu?", "Điều này rất quan trọng với chúng ta", "Về nhà thôi, muộn rồi",
           "Cảm ơn bạn đã giúp đỡ",
           "Anh ấy sẽ về sau một giờ", "Hãy bắt đầu lại từ đầu", "Không có chuyện gì xảy ra"),
    "hi": ("हम वीडियो से उपशीर्षक पढ़ते हैं", "नमस्ते, आप कैसे हैं?", "मुझे नहीं पता क्या कहूँ", "कल शाम तुम कहाँ थे?",
           "यह हमारे लिए बहुत ज़रूरी है", "घर चलो, देर हो गई है", "मदद के लिए धन्यवाद", "वह एक घंटे में लौटेगा",
           "चलो फिर से शुरू करते हैं", "कुछ बुरा नहीं हुआ"),
    "ja": ("動画から字幕を読み取ります", "こんにちは、お元気ですか？", "何と言えばいいかわかりません",
           "昨日の夜どこにいたの？",
           "これは私たちにとって大切です", "もう遅いから帰ろう", "手伝ってくれてありがとう", "一時間後に戻ります",
           "最初からやり直そう", "何も悪いことは起きなかった"),
    "fr": ("Nous lisons les sous-titres des vidéos", "Bonjour, ça va ?", "Je ne sais pas quoi dire",
           "Où étais-tu hier soir ?", "C'est très important pour nous", "Rentrons, il est déjà tard",
           "Merci pour ton aide", "Il reviendra dans une heure", "Recommençons depuis le début", "Noël à Besançon"),
    "de": ("Wir lesen Untertitel aus Videos", "Hallo, wie geht's dir?", "Ich weiß nicht, was ich sagen soll",
           "Wo warst du gestern Abend?", "Das ist sehr wichtig für uns", "Gehen wir nach Hause, es ist spät",
           "Danke für deine Hilfe", "Er kommt in einer Stunde zurück", "Fangen wir von vorne an", "Grüße aus München"),
    "es": ("Leemos los subtítulos de los vídeos", "Hola, ¿qué tal?", "No sé qué decir", "¿Dónde estabas anoche?",
           "Esto es muy importante para nosotros", "Vámonos a casa, ya es tarde", "Gracias por tu ayuda",
           "Volverá dentro de una hora", "Empecemos desde el principio", "El niño comió piña"),
    "pl": ("Czytamy napisy z filmów", "Cześć, jak się masz?", "Nie wiem, co powiedzieć",
           "Gdzie byłeś wczoraj wieczorem?",
           "To bardzo ważne dla nas", "Chodźmy do domu, już późno", "Dziękuję za pomoc", "Wróci za godzinę",
           "Zacznijmy od początku", "Żółć gęślą jaźń"),
    "tr": ("Videolardan altyazı okuyoruz", "Merhaba, nasılsın?", "Ne diyeceğimi bilmiyorum", "Dün akşam neredeydin?",
           "Bu bizim için çok önemli", "Eve gidelim, geç oldu", "Yardımın için teşekkürler", "Bir saat sonra dönecek",
           "Baştan başlayalım", "İstanbul'da güzel bir gün"),
}

#: Font families per language (fontconfig names); those not installed are left out.
_LATIN = ("Noto Sans", "Noto Serif", "DejaVu Sans")
FONTS: dict[str, tuple[str, ...]] = {
    "ru": _LATIN, "uk": _LATIN, "el": _LATIN, "vi": _LATIN, "fr": _LATIN, "de": _LATIN, "es": _LATIN, "pl": _LATIN,
    "tr": _LATIN,
    "ko": ("Noto Sans CJK KR", "Noto Serif CJK KR"),
    "ja": ("Noto Sans CJK JP", "Noto Serif CJK JP"),
    "ar": ("Noto Sans Arabic", "Noto Naskh Arabic"),  # Debian 12's Noto Kufi Arabic shows boxes in libass
    "he": ("Noto Sans Hebrew", "Noto Serif Hebrew", "DejaVu Sans"),
    "th": ("Noto Sans Thai", "Noto Serif Thai", "Loma", "Garuda"),
    "hi": ("Noto Sans Devanagari", "Noto Serif Devanagari"),
}  # fmt: skip

BACKGROUNDS = (
    "mandelbrot=s=1280x720:r=25",
    "gradients=s=1280x720:r=25:speed=0.02",
    "cellauto=s=320x180:r=25:rule=110,scale=1280x720:flags=neighbor,format=yuv420p,lutyuv=y=val*0.45+30",
    "life=s=320x180:r=25:mold=10:ratio=0.4,scale=1280x720:flags=neighbor,format=yuv420p",
    "color=c=0x406080:s=1280x720:r=25,noise=alls=40:allf=t+u",
)
SECONDS = 10
CUES = 4


def installed_families() -> set[str]:
    out = subprocess.run(["fc-list", ":", "family"], capture_output=True, text=True, check=True).stdout
    return {name.strip() for line in out.splitlines() for name in line.split(",")}


def srt_time(ms: int) -> str:
    return f"{ms // 3600000:02d}:{ms // 60000 % 60:02d}:{ms // 1000 % 60:02d},{ms % 1000:03d}"


def make_video(path: Path, lang: str, index: int, seed: int, fonts: list[str]) -> Path:
    """One video of ``lang`` and its truth ``path.with_suffix('.srt')`` (kept when both exist)."""
    truth = path.with_suffix(".srt")
    if path.is_file() and truth.is_file():
        return truth
    rng = random.Random(f"{seed}:{lang}:{index}")
    lines = rng.sample(TEXTS[lang], CUES)
    blocks, t = [], 500
    for n, text in enumerate(lines, 1):
        length = rng.randint(1500, 2000)
        blocks.append(f"{n}\n{srt_time(t)} --> {srt_time(t + length)}\n{text}\n")
        t += length + rng.randint(300, 600)
    truth.write_text("\n".join(blocks), encoding="utf-8")
    font = fonts[index % len(fonts)]
    style = (f"FontName={font},FontSize={rng.randint(28, 38)},PrimaryColour=&H00FFFFFF,OutlineColour=&H00000000,"
             f"BorderStyle=1,Outline={rng.choice((2, 2.5, 3))},Shadow=0,Alignment=2,MarginV={rng.randint(20, 60)}")
    background = BACKGROUNDS[index % len(BACKGROUNDS)]
    # PlayResY of an SRT is 288: a FontSize of 28-38 is 70-95 px of script at 720p, glyphs about 38-52 px tall
    graph = f"{background},trim=duration={SECONDS},format=yuv420p,subtitles=filename={truth}:force_style='{style}'"
    tmp = path.with_suffix(".part.mp4")
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", graph, "-c:v", "libx264", "-preset", "veryfast",
                    "-crf", "20", "-pix_fmt", "yuv420p", str(tmp)], check=True)  # fmt: skip
    tmp.replace(path)
    return truth


def frame_times(video: Path):
    from flowocr.probe import probe, scan_index

    index = scan_index(probe(str(video)))
    return [index.seconds(k) for k in range(len(index))]


def read_video(video: Path, lang: str) -> tuple[list, bool, str]:
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run([sys.executable, "-m", "flowocr", "run", str(video), "--lang", lang, "-o", tmp,
                               "--formats", "srt", "-q"], capture_output=True, text=True)  # fmt: skip
        srt = Path(tmp) / f"{video.stem}.srt"
        if done.returncode != 0 or not srt.is_file():
            return [], False, done.stderr.strip()[-300:]
        return read_srt(srt), True, ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--langs", default="ru,ko,ar,th,he,uk,el,vi,hi,ja,fr,de,es,pl,tr")
    parser.add_argument("--videos", type=int, default=6)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    out = args.out or cache / "flowocr" / "langs"
    families = installed_families()
    results, failed = {}, 0
    for lang in [code.strip() for code in args.langs.split(",") if code.strip()]:
        if lang not in TEXTS:
            parser.error(f"no texts for {lang!r}; languages with texts: {', '.join(TEXTS)}")
        fonts = [f for f in FONTS[lang] if f in families]
        if not fonts:
            print(f"{lang}: skipped, none of its fonts is installed ({', '.join(FONTS[lang])})", flush=True)
            continue
        folder = out / f"seed{args.seed}" / lang
        folder.mkdir(parents=True, exist_ok=True)
        totals = {"truth_cues": 0, "exact_cues": 0, "chars": 0, "char_errors": 0, "missed": 0, "phantom": 0}
        videos = []
        for k in range(args.videos):
            video = folder / f"{lang}_{k:02d}.mp4"
            truth_path = make_video(video, lang, k, args.seed, fonts)
            truth = [(e.start, e.end, e.text) for e in read_srt(truth_path)]
            # libass wraps a line wider than the frame: a wrap is layout, not reading, so lines are compared as one
            pred, ok, error = read_video(video, lang)
            failed += not ok
            pred = [(e.start, e.end, " ".join(e.text.split())) for e in pred]
            score = score_cues(pred, truth, frame_times(video))
            exact = sum(m.exact for m in score.matches)
            totals["truth_cues"] += score.truth_cues
            totals["exact_cues"] += exact
            totals["chars"] += score.truth_chars
            totals["char_errors"] += score.char_errors
            totals["missed"] += score.missed
            totals["phantom"] += score.phantom
            wrong = [(truth[m.truth][2], pred[m.pred][2]) for m in score.matches if not m.exact]
            background = BACKGROUNDS[k % len(BACKGROUNDS)].split("=")[0]
            font = fonts[k % len(fonts)]
            videos.append({"video": video.name, "font": font, "background": background, "exact": exact,
                           "cues": score.truth_cues, "cer": score.cer, "missed": score.missed,
                           "phantom": score.phantom, "wrong": wrong, "error": error})  # fmt: skip
            print(f"{video.name} ({background}, {font}): exact {exact}/{score.truth_cues}, CER {score.cer:.3f}, "
                  f"missed {score.missed}, phantom {score.phantom}{' FAILED ' + error if not ok else ''}",
                  flush=True)  # fmt: skip
            for t, p in wrong:
                print(f"    {t!r} -> {p!r}", flush=True)
        results[lang] = {**totals, "exact": totals["exact_cues"] / max(1, totals["truth_cues"]),
                         "cer": totals["char_errors"] / max(1, totals["chars"]), "videos": videos}  # fmt: skip
    print(f"\n{'lang':<5} {'videos':>6} {'cues':>5} {'exact':>6} {'CER':>7} {'missed':>6} {'phantom':>7}")
    for lang, r in results.items():
        print(f"{lang:<5} {len(r['videos']):>6} {r['truth_cues']:>5} {r['exact']:>6.3f} {r['cer']:>7.4f} "
              f"{r['missed']:>6} {r['phantom']:>7}")  # fmt: skip
    if args.json:
        args.json.write_text(json.dumps(results, ensure_ascii=False, indent=2), encoding="utf-8")
    return 8 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
