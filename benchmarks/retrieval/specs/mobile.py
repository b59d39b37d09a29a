"""Tidepool: a React Native (Expo) app for tide tables and surf forecasts, TypeScript (Carla)."""

from __future__ import annotations

import tool_output as noise
from ._base import A, C, Spec, U, rng_for

CWD = "/home/carla/src/tidepool"
CWD_ES = "/home/pablo/src/tidepool"

SUITES = ["src/screens/__tests__/TideChart.test.tsx", "src/screens/__tests__/SpotList.test.tsx",
          "src/store/__tests__/spots.test.ts", "src/store/__tests__/settings.test.ts", "src/api/__tests__/forecast.test.ts",
          "src/components/__tests__/SwellBadge.test.tsx", "src/utils/__tests__/units.test.ts",
          "src/notifications/__tests__/register.test.ts"]


def specs() -> list[Spec]:
    out = []

    # -- decision chain: state management (Redux Toolkit -> Zustand) --------------------------------
    r = rng_for("mobile-state-1")
    out.append(Spec("mobile-state-1", "claude", CWD, 480, [
        U("State is getting messy: favourite spots are in AsyncStorage, units in a context, forecasts refetched on "
          "every screen. Set up proper global state."),
        C("npm install @reduxjs/toolkit react-redux redux-persist", noise.npm_install(r, 14)),
        A("I'll use Redux Toolkit: slices for spots, settings and forecasts, RTK Query for the forecast API "
          "(caching and refetch on focus), and redux-persist for favourites and units."),
        C("npx jest", noise.jest_run(r, SUITES[:6])),
        A("Global state now lives in Redux Toolkit (src/store/: spotsSlice, settingsSlice, RTK Query `forecastApi`), "
          "persisted with redux-persist to AsyncStorage."),
    ], notes="state chain 1/2: Redux Toolkit"))

    r = rng_for("mobile-state-2")
    out.append(Spec("mobile-state-2", "claude", CWD, 180, [
        U("Every tiny feature needs a slice, actions, selectors and a test for the reducer. For an app this size "
          "Redux feels like too much ceremony. Could we go lighter?"),
        C("find src/store -name '*.ts' | xargs wc -l | tail -1", " 1184 total"),
        A("Zustand stores are plain hooks with no provider and no action boilerplate, and TanStack Query can take over "
          "the forecast fetching that RTK Query does now. The persisted bits (favourites, units) use zustand's "
          "persist middleware."),
        U("Yes, migrate to zustand + tanstack query, remove redux entirely"),
        C("npm uninstall @reduxjs/toolkit react-redux redux-persist && npm install zustand @tanstack/react-query",
          noise.npm_install(r, 3)),
        C("npx jest", noise.jest_run(r, SUITES)),
        C("git diff --stat", noise.git_diff_stat(r, ["src/store/spots.ts", "src/store/settings.ts", "src/api/forecast.ts",
                                                     "src/App.tsx", "src/screens/TideChart.tsx", "src/screens/SpotList.tsx",
                                                     "package.json", "package-lock.json"])),
        A("State management moved from Redux Toolkit to Zustand (src/store/spots.ts, settings.ts with persist) and "
          "TanStack Query for forecasts. Redux, react-redux and redux-persist are removed; src/store went from 1,184 "
          "to 310 lines."),
    ], notes="state chain 2/2 (current): Zustand + TanStack Query"))

    # -- decision chain: push notifications (OneSignal -> Expo push) ---------------------------------
    r = rng_for("mobile-push-1")
    out.append(Spec("mobile-push-1", "codex", CWD, 360, [
        U("Users want a notification when a favourite spot gets a good swell forecast for tomorrow. Add push "
          "notifications on iOS and Android."),
        C("npx expo install react-native-onesignal onesignal-expo-plugin", noise.npm_install(r, 6)),
        A("Going with OneSignal: free tier, dashboard for segments, and the Expo config plugin handles the native "
          "setup. The backend will call OneSignal's REST API with the user's external id."),
        C("npx expo prebuild --platform ios", "✔ Created native directory\n✔ Updated package.json\n› Installing using CocoaPods\n"
          "✔ Config synced"),
        A("Push notifications go through OneSignal (react-native-onesignal + onesignal-expo-plugin); the forecast "
          "job calls the OneSignal API for users with a favourite spot scoring >= 7."),
    ], notes="push chain 1/2: OneSignal"))

    r = rng_for("mobile-push-2")
    out.append(Spec("mobile-push-2", "claude", CWD, 50, [
        U("OneSignal's SDK adds 4 MB to the app and their new pricing charges per subscriber above 10k; we're at 14k. "
          "Is there a cheaper way for what we do (one swell alert per day)?"),
        A("Expo's push service is free, works with the FCM/APNs credentials EAS already manages, and "
          "expo-notifications is a small module. The backend sends to Expo push tokens in batches of 100 with the "
          "exponent-server-sdk."),
        U("switch to expo push then"),
        C("npm uninstall react-native-onesignal onesignal-expo-plugin && npx expo install expo-notifications expo-device",
          noise.npm_install(r, 2)),
        C("npx jest src/notifications", noise.jest_run(r, ["src/notifications/__tests__/register.test.ts"])),
        C("eas build --platform android --profile preview", "✔ Build finished\n\n🤖 Android app:\n"
          "https://expo.dev/artifacts/eas/3hQk9vXcmZ.apk"),
        A("Push notifications now use Expo push (expo-notifications; tokens stored in `push_tokens`, backend sends via "
          "exponent-server-sdk in batches of 100). OneSignal SDK and plugin removed: app size -4.1 MB, no per-"
          "subscriber fee."),
    ], notes="push chain 2/2 (current): Expo push notifications"))

    # -- errors -------------------------------------------------------------------------------------
    r = rng_for("mobile-lstar")
    out.append(Spec("mobile-lstar", "codex", CWD, 260, [
        U("Android build broke after adding the maps library, iOS is fine."),
        C("cd android && ./gradlew assembleDebug", noise.gradle_log(r, [
            "app:preBuild", "app:preDebugBuild", "app:generateDebugBuildConfig", "app:mergeDebugResources"],
            "FAILURE: Build failed with an exception.\n\n* What went wrong:\nExecution failed for task ':app:processDebugResources'.\n"
            "> A failure occurred while executing com.android.build.gradle.internal.res.LinkApplicationAndroidResourcesTask$TaskAction\n"
            "   > Android resource linking failed\n     ERROR: /home/carla/.gradle/caches/transforms-3/9f1c/transformed/core-1.9.0/res/values/values.xml:104:5-113:25: "
            "AAPT: error: resource android:attr/lStar not found.\n\n* Try:\n> Run with --stacktrace option to get the stack trace.\n\n"
            "BUILD FAILED in 1m 12s"), failed=True),
        A("`lStar` exists from API 31. The maps library pulls androidx.core 1.9.0, which needs compileSdkVersion 31+, "
          "and we compile against 30. Bump compileSdkVersion and targetSdkVersion to 34 through expo-build-properties."),
        C("npx expo install expo-build-properties && npx expo prebuild --clean --platform android", "✔ Cleared android code\n✔ Created native directory"),
        C("cd android && ./gradlew assembleDebug", noise.gradle_log(r, ["app:mergeDebugResources", "app:processDebugResources",
                                                                          "app:compileDebugKotlin", "app:assembleDebug"],
                                                                      "BUILD SUCCESSFUL in 3m 4s\n412 actionable tasks: 389 executed, 23 up-to-date")),
        A("Fixed `AAPT: error: resource android:attr/lStar not found`: compileSdkVersion 34 / targetSdkVersion 34 set via "
          "expo-build-properties in app.json."),
    ], notes="error: resource android:attr/lStar not found"))

    r = rng_for("mobile-pods")
    out.append(Spec("mobile-pods", "claude", CWD, 140, [
        U("pod install fails after upgrading to Expo SDK 51."),
        C("cd ios && pod install", "Analyzing dependencies\n[!] CocoaPods could not find compatible versions for pod \"hermes-engine\":\n"
          "  In snapshot (Podfile.lock):\n    hermes-engine (= 0.73.6)\n\n  In Podfile:\n    hermes-engine (from `../node_modules/react-native/sdks/hermes-engine/hermes-engine.podspec`)\n\n"
          "You have either:\n * out-of-date source repos which you can update with `pod repo update` or with `pod install --repo-update`.\n"
          " * changed the constraints of dependency `hermes-engine` inside your development pod `hermes-engine`.",
          failed=True),
        A("Podfile.lock still pins the Hermes from RN 0.73. Remove the lock entry and let CocoaPods resolve again."),
        C("cd ios && rm -rf Pods Podfile.lock && pod install --repo-update",
          "Analyzing dependencies\nDownloading dependencies\nInstalling hermes-engine (0.74.3)\n...\nPod installation complete! "
          "There are 94 dependencies from the Podfile and 93 total pods installed."),
        A("Fixed by deleting ios/Pods and Podfile.lock and running `pod install --repo-update`; hermes-engine 0.74.3 now matches RN 0.74."),
    ], notes="error: CocoaPods could not find compatible versions for pod hermes-engine"))

    r = rng_for("mobile-hooks-crash")
    out.append(Spec("mobile-hooks-crash", "claude", CWD, 80, [
        U("The tide chart screen crashes when I turn the phone to landscape. Red screen:\n\n"
          "Error: Rendered more hooks than during the previous render.\n\nThis error is located at:\n"
          "    in TideChart (created by SceneView)\n    in StaticContainer\n    in EnsureSingleNavigator"),
        C("sed -n 20,60p src/screens/TideChart.tsx", noise.source_file(r, [
            "export function TideChart({ spotId }: Props) {", "  const { width, height } = useWindowDimensions();",
            "  const tides = useTides(spotId);", "  if (width > height) {", "    const [zoom, setZoom] = useState(1);",
            "    return <LandscapeChart tides={tides} zoom={zoom} onZoom={setZoom} />;", "  }",
            "  return <PortraitChart tides={tides} />;", "}"])),
        A("`useState` is called inside the `if (width > height)` branch, so rotating changes the number of hooks between "
          "renders. Hooks must run unconditionally: lift `useState(1)` above the branch."),
        C("npx jest src/screens", noise.jest_run(r, SUITES[:2])),
        C("npx eslint src/ --rule 'react-hooks/rules-of-hooks: error'", "\n✖ 0 problems"),
        A("Fixed the rotation crash in src/screens/TideChart.tsx (conditional useState). Enabled the "
          "react-hooks/rules-of-hooks lint rule as an error so this fails in CI."),
    ], notes="paraphrase target: crash when phone turned sideways; Rendered more hooks"))

    r = rng_for("mobile-mmkv")
    out.append(Spec("mobile-mmkv", "codex", CWD, 20, [
        U("Surfers open the app on the beach with no signal and get an empty screen. Cache the last forecast and "
          "tide tables on the device."),
        A("AsyncStorage is slow for the ~300 KB forecast payload and async on every read. react-native-mmkv is "
          "synchronous and ~30x faster; TanStack Query can persist its cache to it with a small persister."),
        C("npx expo install react-native-mmkv @tanstack/query-sync-storage-persister @tanstack/react-query-persist-client",
          noise.npm_install(r, 4)),
        C("npx expo prebuild --clean", "✔ Cleared android, ios code\n✔ Created native directories\n✔ Config synced"),
        C("npx jest", noise.jest_run(r, SUITES)),
        A("Offline mode: the TanStack Query cache is persisted to MMKV (src/storage/mmkv.ts, persister maxAge 7 days). "
          "With no network the app shows the last forecast with an 'offline, updated 3 h ago' banner."),
    ], notes="offline cache with MMKV"))

    r = rng_for("mobile-splash-es")
    out.append(Spec("mobile-splash-es", "claude", CWD_ES, 100, [
        U("En Android 14 la app se queda en blanco al abrirla, solo se ve el fondo azul de la pantalla de inicio y no "
          "pasa de ahí. En Android 13 funciona bien."),
        C("adb logcat -d | grep -i -E 'ReactNativeJS|SplashScreen' | tail -n 8",
          "11-02 10:14:22.311  8812  8840 I ReactNativeJS: Running \"main\"\n"
          "11-02 10:14:22.640  8812  8840 W ReactNativeJS: [expo-splash-screen] No native splash screen registered for given view controller\n"
          "11-02 10:14:27.002  8812  8812 W SplashScreen: hideAsync timed out"),
        A("Con la API de splash de Android 12+ el módulo expo-splash-screen necesita que `preventAutoHideAsync()` se "
          "llame a nivel de módulo, antes del primer render. Lo estamos llamando dentro de un useEffect, y en Android "
          "14 la pantalla de inicio ya se ha gestionado cuando llega: `hideAsync` no hace nada y se queda la pantalla azul."),
        C("npx jest", noise.jest_run(r, SUITES[:4])),
        A("Arreglado: `SplashScreen.preventAutoHideAsync()` ahora se llama al cargar App.tsx (fuera del componente) y "
          "`hideAsync()` cuando las fuentes y la caché están listas. Probado en un Pixel 7 con Android 14 y en Android 13."),
    ], lang="es", notes="Spanish: blank/blue screen on launch on Android 14, splash screen"))
    return out
